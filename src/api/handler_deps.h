#pragma once
// What the API's handler families share. The API's endpoints are rows of one
// route table (api/route.h); each family of routes is a small class of its
// own over this one struct, which ExportApi builds once:
//
//   TaskActionHandlers (task_action_handlers.h)  create, retry, export again, cancel;
//   TaskReadHandlers   (task_read_handlers.h)    the list, one task, its timeline, the
//                                                task event stream and its tickets;
//   DownloadHandlers   (download_handlers.h)     the direct and the signed download, the
//                                                signing of links, the download audit;
//   ExportApi::Handlers (export_api.cc)          the table itself, authentication and the
//                                                access log; export types, the preview,
//                                                /healthz, /readyz, /metrics, the page.
//
// Every handler parses, calls a use case (src/usecase/) and writes the
// envelope; the handlers run on the server's worker threads and share no
// mutable state.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "api/export_api.h"
#include "api/route.h"
#include "http/http_request.h"
#include "http/http_response.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "usecase/create.h"
#include "usecase/task_actions.h"

namespace export_center::api {

using identity::Principal;

class TokenVerifier;
class TaskEventHub;
class EventsTickets;

inline constexpr char kRequestIdHeader[] = "X-Request-Id";

struct HandlerDeps {
  const ExportApiDeps* api = nullptr;       // the wiring (export_api.h); never null
  const TokenVerifier* verifier = nullptr;  // null when the auth config is unusable
  std::string download_secret{};            // signs and opens download links
  EventsTickets* tickets = nullptr;         // POST /export-tasks/events-ticket
  TaskEventHub* events = nullptr;           // GET /export-tasks/events
  usecase::CreateDeps create{};             // create and export again
  usecase::TaskActionDeps actions{};        // retry, cancel, export again

  std::shared_ptr<const registry::RegistrySnapshot> Snapshot() const {
    return api->registry->Current();
  }
};

// kApiBase + suffix: the full path of one of the API's routes.
inline std::string ApiPath(const std::string& suffix) { return std::string(kApiBase) + suffix; }

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A family's row of the route table: `pattern` relative to kApiBase, the
// handler one of the family's member functions.
template <class Family>
Route FamilyRoute(Family* family, const char* method, const std::string& pattern,
                  void (Family::*fn)(const http::HttpRequest&, const Principal&,
                                     http::HttpResponse&),
                  RouteNeeds needs = RouteNeeds::kCaller) {
  return Route{method, ApiPath(pattern), needs,
               [family, fn](const http::HttpRequest& req, const Principal& p,
                            http::HttpResponse& res) { (family->*fn)(req, p, res); }};
}

}  // namespace export_center::api
