#include "notify/mail/curl_mail_sender.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "common/utf8.h"

namespace export_center::notify::mail {
namespace {

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

// libcurl's global state, once per process (thread-safe since 7.84, but
// other libraries of the process may not have called it).
void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Reader {
  const std::string* bytes = nullptr;
  size_t offset = 0;
};

size_t ReadMessage(char* buffer, size_t size, size_t count, void* user) {
  auto* reader = static_cast<Reader*>(user);
  const size_t n = std::min(size * count, reader->bytes->size() - reader->offset);
  std::memcpy(buffer, reader->bytes->data() + reader->offset, n);
  reader->offset += n;
  return n;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

class CurlMailSender final : public MailSender {
 public:
  explicit CurlMailSender(MailOptions options) : options_(std::move(options)) {
    const char* scheme = options_.tls == MailTls::kImplicit ? "smtps://" : "smtp://";
    const std::string host =
        options_.host.find(':') != std::string::npos && options_.host.front() != '['
            ? "[" + options_.host + "]"
            : options_.host;
    url_ = std::string(scheme) + host + ":" + std::to_string(options_.port);
  }

  Status Send(const MailMessage& message, std::chrono::steady_clock::time_point deadline) override {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    const auto left = duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return DeadlineExceeded("mail not sent: its deadline had passed");
    if (message.to.empty()) return InvalidArgument("mail without recipients");
    const std::string bytes = BuildMimeMessage(message);
    if (static_cast<long long>(bytes.size()) > options_.message_max_bytes) {
      return InvalidArgument("the message is " + std::to_string(bytes.size()) +
                             " bytes, more than mail.message-max-bytes (" +
                             std::to_string(options_.message_max_bytes) + ")");
    }
    std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
    if (!curl) return Internal("curl_easy_init failed");
    CURL* c = curl.get();
    std::unique_ptr<curl_slist, SlistDeleter> rcpt;
    for (const std::string& to : message.to) {
      curl_slist* grown = curl_slist_append(rcpt.get(), ("<" + to + ">").c_str());
      if (grown == nullptr) return Internal("curl_slist_append failed");
      rcpt.release();
      rcpt.reset(grown);
    }
    Reader reader{&bytes, 0};
    char error[CURL_ERROR_SIZE] = {0};
    const long total_ms = std::min<long>(options_.timeout_ms, static_cast<long>(left.count()));
    const long connect_ms = std::min<long>(options_.connect_timeout_ms, total_ms);
    const std::string from = "<" + message.from + ">";

    curl_easy_setopt(c, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
    // STARTTLS required: CURLUSESSL_ALL fails the transfer when the server
    // does not offer it, where CURLUSESSL_TRY would go on in plain text.
    curl_easy_setopt(c, CURLOPT_USE_SSL,
                     options_.tls == MailTls::kNone ? long{CURLUSESSL_NONE} : long{CURLUSESSL_ALL});
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!options_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options_.ca_file.c_str());
    if (!options_.username.empty()) {
      curl_easy_setopt(c, CURLOPT_USERNAME, options_.username.c_str());
      curl_easy_setopt(c, CURLOPT_PASSWORD, options_.password.c_str());
    }
    curl_easy_setopt(c, CURLOPT_MAIL_FROM, from.c_str());
    curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt.get());
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, &ReadMessage);
    curl_easy_setopt(c, CURLOPT_READDATA, &reader);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(bytes.size()));

    const CURLcode code = curl_easy_perform(c);
    if (code == CURLE_OK) return Status::Ok();
    long reply = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply);
    return Translate(code, reply, error[0] != '\0' ? error : curl_easy_strerror(code));
  }

 private:
  // libcurl's result and the server's last reply code as a Status, in one place.
  Status Translate(CURLcode code, long reply, const std::string& text) const {
    const std::string where = "SMTP " + options_.host + ":" + std::to_string(options_.port);
    const std::string detail = utf8::Excerpt(text, 300);
    switch (code) {
      case CURLE_OPERATION_TIMEDOUT:
        return DeadlineExceeded(where + ": timed out: " + detail);
      case CURLE_LOGIN_DENIED:
        return Unauthenticated(where + ": AUTH refused for mail.username '" + options_.username +
                               "': " + detail);
      case CURLE_USE_SSL_FAILED:
        return Unavailable(where + ": the server does not offer STARTTLS, which mail.tls " +
                           "starttls requires: " + detail);
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CACERT_BADFILE:
        return Unavailable(where + ": TLS certificate check failed: the server's certificate" +
                           " did not verify against " +
                           (options_.ca_file.empty() ? std::string("the system CAs")
                                                     : "mail.ca-file " + options_.ca_file) +
                           ": " + detail);
      default:
        break;
    }
    if (reply >= 500 && reply < 600) {
      return InvalidArgument(where + ": the server refused the message (" + std::to_string(reply) +
                             "): " + detail);
    }
    if (reply >= 400 && reply < 500) {
      return Unavailable(where + ": temporary refusal (" + std::to_string(reply) + "): " + detail);
    }
    return Unavailable(where + ": " + detail);
  }

  const MailOptions options_;
  std::string url_;
};

}  // namespace

StatusOr<std::unique_ptr<MailSender>> NewCurlMailSender(const MailOptions& options) {
  if (options.host.empty()) return InvalidArgument("mail.host: not set");
  if (options.tls == MailTls::kNone && !IsLoopbackHost(options.host)) {
    return InvalidArgument("mail.tls: none is allowed only for a loopback host, not '" +
                           options.host + "'");
  }
  GlobalInitOnce();
  return std::unique_ptr<MailSender>(std::make_unique<CurlMailSender>(options));
}

}  // namespace export_center::notify::mail
