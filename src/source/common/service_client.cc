#include "source/common/service_client.h"

#include <utility>

namespace export_center::source {

http::HttpClientOptions ServiceClientOptions(std::string base_url, int connect_timeout_ms,
                                             int read_timeout_ms) {
  http::HttpClientOptions o;
  o.base_url = std::move(base_url);
  o.connect_timeout_ms = connect_timeout_ms;
  o.read_timeout_ms = read_timeout_ms;
  o.write_timeout_ms = read_timeout_ms;
  o.keep_alive = true;
  o.tcp_nodelay = true;
  return o;
}

}  // namespace export_center::source
