#include "notify/webhook_sender.h"

#include <httplib.h>

namespace export_center::notify {
namespace {

// "https://host:port/a/b?c" → {"https://host:port", "/a/b?c"}.
std::pair<std::string, std::string> SplitUrl(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const size_t path_start =
      scheme_end == std::string::npos ? std::string::npos : url.find('/', scheme_end + 3);
  if (path_start == std::string::npos) return {url, "/"};
  return {url.substr(0, path_start), url.substr(path_start)};
}

void SetTimeout(httplib::Client& client, int connect_ms, int io_ms) {
  client.set_connection_timeout(connect_ms / 1000, (connect_ms % 1000) * 1000);
  client.set_read_timeout(io_ms / 1000, (io_ms % 1000) * 1000);
  client.set_write_timeout(io_ms / 1000, (io_ms % 1000) * 1000);
}

}  // namespace

WebhookAnswer PostWebhook(const std::string& url, const HeaderList& headers,
                          const std::string& body, int connect_timeout_ms, int timeout_ms) {
  WebhookAnswer answer;
  auto [origin, path] = SplitUrl(url);
  httplib::Client client(origin);
  if (!client.is_valid()) {
    answer.error = "invalid receiver URL";
    return answer;
  }
  SetTimeout(client, connect_timeout_ms, timeout_ms);
  client.set_follow_location(false);
  client.set_keep_alive(false);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  for (const auto& [name, value] : headers) req.set_header(name, value);
  req.set_header("Content-Type", "application/json");
  req.body = body;
  // The status is all we need: stop before the body, so a receiver that
  // answers with an endless body costs nothing.
  req.response_handler = [&answer](const httplib::Response& res) {
    answer.answered = true;
    answer.status = res.status;
    return false;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (!client.send(req, res, error) && !answer.answered) {
    answer.error = "no answer: " + httplib::to_string(error) + " error";
  }
  return answer;
}

}  // namespace export_center::notify
