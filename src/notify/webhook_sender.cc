#include "notify/webhook_sender.h"

namespace export_center::notify {

WebhookAnswer PostWebhook(http::HttpClientFactory* http, const std::string& url,
                          const HeaderList& headers, const std::string& body,
                          int connect_timeout_ms, int timeout_ms) {
  WebhookAnswer answer;
  auto [origin, path] = http::SplitUrl(url);
  http::HttpClientOptions options;
  options.base_url = origin;
  options.connect_timeout_ms = connect_timeout_ms;
  options.read_timeout_ms = timeout_ms;
  options.write_timeout_ms = timeout_ms;
  options.keep_alive = false;
  auto client = http->NewClient(options);
  if (!client.ok()) {
    answer.error = "invalid receiver URL";
    return answer;
  }
  http::ClientRequest request;
  request.method = "POST";
  request.path = path;
  for (const auto& [name, value] : headers) request.headers.Add(name, value);
  request.content_type = "application/json";
  request.body = body;
  // The status is all we need: stop before the body, so a receiver that
  // answers with an endless body costs nothing.
  request.read_body = false;
  http::ClientAnswer sent = (*client)->Send(request);
  if (sent.outcome == http::ClientAnswer::Outcome::kNotSent) {
    answer.error = "no answer: " + sent.error_text + " error";
    return answer;
  }
  answer.answered = true;
  answer.status = sent.status;
  return answer;
}

}  // namespace export_center::notify
