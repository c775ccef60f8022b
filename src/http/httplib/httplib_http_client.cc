#include "http/httplib/httplib_http_client.h"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <system_error>
#include <utility>

namespace export_center::http {
namespace {

ClientError ErrorOf(httplib::Error error) {
  switch (error) {
    case httplib::Error::Success:
      return ClientError::kNone;
    case httplib::Error::Connection:
      return ClientError::kConnection;
    case httplib::Error::ConnectionTimeout:
      return ClientError::kConnectionTimeout;
    case httplib::Error::Read:
      return ClientError::kRead;
    case httplib::Error::Write:
      return ClientError::kWrite;
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return ClientError::kTls;
    default:
      return ClientError::kOther;
  }
}

HeaderMap HeadersOf(const httplib::Response& res) {
  HeaderMap out;
  for (const auto& [name, value] : res.headers) out.Add(name, value);
  return out;
}

// A declared length past the cap (or past int64) fails before a byte is read.
bool DeclaredTooLarge(const httplib::Response& res, int64_t max_bytes) {
  const std::string length = res.get_header_value("Content-Length");
  int64_t declared = 0;
  auto parsed = std::from_chars(length.data(), length.data() + length.size(), declared);
  return parsed.ec == std::errc::result_out_of_range || declared > max_bytes;
}

class HttplibHttpClient : public HttpClient {
 public:
  explicit HttplibHttpClient(std::unique_ptr<httplib::Client> client)
      : client_(std::move(client)) {}

  // HttpClient:
  ClientAnswer Send(const ClientRequest& request) override {
    ClientAnswer answer;
    bool too_large = false;
    bool too_slow = false;
    bool stopped_at_head = false;
    httplib::Request req;
    req.method = request.method;
    req.path = request.path;
    for (const auto& [name, value] : request.headers.fields()) req.set_header(name, value);
    if (!request.content_type.empty()) req.set_header("Content-Type", request.content_type);
    if (!request.body.empty()) {
      // Written from request.body itself: cpp-httplib would copy req.body,
      // and a body may be a lent S3 part of megabytes (http_client.h).
      const std::string& body = request.body;
      req.content_length_ = body.size();
      req.content_provider_ = [&body](size_t offset, size_t length, httplib::DataSink& sink) {
        return sink.write(body.data() + offset, std::min(length, body.size() - offset));
      };
    }
    req.response_handler = [&](const httplib::Response& res) {
      answer.status = res.status;
      if (!request.read_body) {
        stopped_at_head = true;
        answer.headers = HeadersOf(res);
        return false;
      }
      too_large = DeclaredTooLarge(res, request.max_body_bytes);
      return !too_large;
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      if (static_cast<int64_t>(answer.body.size() + n) > request.max_body_bytes) too_large = true;
      if (request.deadline && std::chrono::steady_clock::now() > *request.deadline) {
        too_slow = true;
      }
      if (too_large || too_slow) return false;
      answer.body.append(data, n);
      return true;
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    const bool sent = client_->send(req, res, error);
    if (too_large) {
      answer.outcome = ClientAnswer::Outcome::kTooLarge;
    } else if (too_slow) {
      answer.outcome = ClientAnswer::Outcome::kTooSlow;
    } else if (stopped_at_head) {
      answer.outcome = ClientAnswer::Outcome::kRead;
    } else if (!sent) {
      answer.outcome = ClientAnswer::Outcome::kNotSent;
      answer.error = ErrorOf(error);
      answer.error_text = httplib::to_string(error);
    } else {
      answer.outcome = ClientAnswer::Outcome::kRead;
      answer.status = res.status;
      answer.headers = HeadersOf(res);
    }
    if (answer.outcome != ClientAnswer::Outcome::kRead) answer.body.clear();
    return answer;
  }

 private:
  std::unique_ptr<httplib::Client> client_;
};

class HttplibFactory : public HttpClientFactory {
 public:
  StatusOr<std::unique_ptr<HttpClient>> NewClient(const HttpClientOptions& options) override {
    auto client = std::make_unique<httplib::Client>(options.base_url);
    if (!client->is_valid()) return InvalidArgument("not a valid base URL: " + options.base_url);
    // The one place the millisecond timeouts become the library's
    // seconds + microseconds (it splits a chrono duration itself).
    client->set_connection_timeout(std::chrono::milliseconds(options.connect_timeout_ms));
    client->set_read_timeout(std::chrono::milliseconds(options.read_timeout_ms));
    client->set_write_timeout(std::chrono::milliseconds(options.write_timeout_ms));
    client->set_follow_location(false);
    client->set_keep_alive(options.keep_alive);
    client->set_tcp_nodelay(options.tcp_nodelay);
    // cpp-httplib verifies an https peer by default, against the system store.
    if (!options.tls.verify_server_certificate) {
      client->enable_server_certificate_verification(false);
    }
    if (!options.tls.ca_cert_file.empty()) client->set_ca_cert_path(options.tls.ca_cert_file);
    return std::unique_ptr<HttpClient>(std::make_unique<HttplibHttpClient>(std::move(client)));
  }
};

}  // namespace

HttpClientFactory* HttplibClientFactory() {
  static HttplibFactory* const factory = new HttplibFactory();
  return factory;
}

}  // namespace export_center::http
