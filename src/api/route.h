#pragma once
// One route shape for every endpoint (envoy's Admin::UrlHandler is the
// model): a row of {method, path, what it needs, handler}. The router runs
// the prologue a row's `needs` names — once, for every row — and the handler
// only parses, calls a use case (src/usecase/) and writes the envelope.
// A new user action is a function in usecase/ and a row here
// (docs/conventions.md#where-a-new-user-action-goes).

#include <functional>
#include <string>

#include "http/http_request.h"
#include "http/http_response.h"
#include "identity/principal.h"

namespace export_center::api {

// What the router establishes before a handler runs.
enum class RouteNeeds {
  kNothing,           // public, or authenticates itself (signed link, event-stream ticket)
  kCaller,            // a verified bearer token; its failure answered in the envelope (HTTP 200)
  kCallerHttpStatus,  // the same, its failure with a real HTTP status (download routes)
};

// The principal is the verified caller, or an empty one for kNothing. The
// response already carries X-Request-Id (the trace id a use case records).
using RouteHandler =
    std::function<void(const http::HttpRequest&, const identity::Principal&, http::HttpResponse&)>;

struct Route {
  std::string method{};
  std::string pattern{};  // "/export-tasks/{id}"; relative to kApiBase for the API's rows
  RouteNeeds needs = RouteNeeds::kCaller;
  RouteHandler handler{};
};

}  // namespace export_center::api
