#pragma once
// One webhook delivery: a POST of a JSON body to a receiver URL that config/
// has already checked against the allow-list, through a client `http` opens
// for the URL's origin (http/http_client.h: redirects are not followed, the
// allow-list vouches for the URL, not for where it points). The answer's body
// is never read: only its status counts. Thread-safe (a client per call).

#include <string>
#include <utility>
#include <vector>

#include "http/http_client.h"

namespace export_center::notify {

struct WebhookAnswer {
  bool answered = false;  // false: connect, send or read failed or timed out
  int status = 0;         // the HTTP status when answered
  std::string error;      // why it was not answered, for last_error and logs
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

WebhookAnswer PostWebhook(http::HttpClientFactory* http, const std::string& url,
                          const HeaderList& headers, const std::string& body,
                          int connect_timeout_ms, int timeout_ms);

}  // namespace export_center::notify
