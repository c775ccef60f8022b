#pragma once
// The HTTP client options both data routes open their business-service
// client with (provider batches, the SQL contract): one client per attempt,
// kept alive across its calls, with TCP_NODELAY (headers and body are two
// writes: without it, Nagle plus delayed ACK adds ~40 ms to every call after
// the first), and the read timeout bounding each stalled write as well.

#include <string>

#include "http/http_client.h"

namespace export_center::source {

http::HttpClientOptions ServiceClientOptions(std::string base_url, int connect_timeout_ms,
                                             int read_timeout_ms);

}  // namespace export_center::source
