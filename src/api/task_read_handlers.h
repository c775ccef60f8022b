#pragma once
// The task reads' routes (docs/http-api.md): GET /export-tasks (the list),
// GET /export-tasks/{id} and its /timeline, and the task event stream —
// POST /export-tasks/events-ticket and GET /export-tasks/events, which
// authenticates itself (a ticket or the Authorization header). Shares
// HandlerDeps with the other families (handler_deps.h).

#include <nlohmann/json.hpp>
#include <vector>

#include "api/handler_deps.h"
#include "api/route.h"
#include "common/status.h"

namespace export_center::api {

class TaskReadHandlers {
 public:
  explicit TaskReadHandlers(const HandlerDeps& deps) : deps_(deps) {}

  // The family's rows; the event stream's needs no verified bearer token.
  std::vector<Route> Routes();

 private:
  void ListTasks(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  StatusOr<nlohmann::json> DoList(const http::HttpRequest& req, const Principal& p);
  void GetTask(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void Timeline(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void EventsTicket(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void TaskEvents(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);

  const HandlerDeps& deps_;
};

}  // namespace export_center::api
