#pragma once
// The task actions' routes (docs/http-api.md): POST /export-tasks (create),
// and on one task POST /retry, /export-again and /cancel. Each parses the
// request, calls its use case (usecase/create.h, usecase/task_actions.h)
// and writes the envelope. Shares HandlerDeps with the other families
// (handler_deps.h).

#include <vector>

#include "api/handler_deps.h"
#include "api/route.h"

namespace export_center::api {

class TaskActionHandlers {
 public:
  explicit TaskActionHandlers(const HandlerDeps& deps) : deps_(deps) {}

  // The family's rows, each needing a verified caller.
  std::vector<Route> Routes();

 private:
  void CreateTask(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void Retry(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void ExportAgain(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void Cancel(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);

  const HandlerDeps& deps_;
};

}  // namespace export_center::api
