#pragma once
// The HttpServer on Boost.Beast and Asio (docs/http-serving.md says why).

#include <memory>

#include "http/http_server.h"

namespace export_center::http {

// `service` is not owned and must outlive the server.
std::unique_ptr<HttpServer> NewBeastHttpServer(const HttpServerOptions& options,
                                               HttpService* service);

}  // namespace export_center::http
