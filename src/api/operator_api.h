#pragma once
// OperatorApi: the operators' console under /api/platform/v1/files/operator/
// (docs/http-api.md#operators-console).
//
// For a caller holding platform:export:operate (its own tenant and app) or
// platform:export:operate-all (every tenant; ?tenantId= narrows): search
// across users, a task's dispatch detail, bulk retry and cancel by filter
// (counted, confirmed with that count, acted on in batches, audited), the
// per-type figures over 24 h and 7 d and the queue health with dead webhook
// deliveries and their re-delivery. A task or delivery outside the caller's
// scope answers exactly like a missing one.
//
// Every figure comes from the store (store/task_operations.h), so each
// instance answers the same. Thread-safe: the handlers share no mutable state.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/auth.h"
#include "common/status.h"
#include "http/http_request.h"
#include "http/http_response.h"
#include "registry/registry.h"
#include "store/task_catalog.h"
#include "store/task_operations.h"

namespace export_center::api {

inline constexpr std::string_view kOperatePermission = "platform:export:operate";
inline constexpr std::string_view kOperateAllPermission = "platform:export:operate-all";

struct OperatorApiDeps {
  store::TaskOperations* operations = nullptr;  // not owned
  store::TaskCatalog* catalog = nullptr;        // the single retry and cancel
  registry::Registry* registry = nullptr;       // not owned
  // Called once after a bulk retry re-queued tasks (wakes the publisher). Optional.
  std::function<void()> on_task_created;
  // A bulk action matching more tasks than this is refused (LimitExceeded).
  int bulk_max_tasks = 5000;
  int bulk_batch_size = 100;
};

class OperatorApi {
 public:
  using Handler = std::function<void(const http::HttpRequest&, const Principal&,
                                     const std::string& request_id, http::HttpResponse&)>;
  struct Route {
    std::string method;
    std::string pattern;  // relative to kApiBase, e.g. "/operator/tasks/{id}"
    Handler handler;
  };

  explicit OperatorApi(OperatorApiDeps deps);

  // The routes; ExportApi authenticates and then calls the handler.
  std::vector<Route> Routes();

 private:
  void Search(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void TaskDetail(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void CountBulk(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void RunBulk(const http::HttpRequest& req, const Principal& p, const std::string& request_id,
               http::HttpResponse& res) const;
  void ListBulk(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void Stats(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void QueueHealth(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void Redeliver(const http::HttpRequest& req, const Principal& p, const std::string& request_id,
                 http::HttpResponse& res) const;

  // One task of a bulk action, by the rules of the single retry or cancel.
  Status ActOnOne(const std::string& action, int64_t task_id, const std::string& request_id) const;

  OperatorApiDeps deps_;
};

}  // namespace export_center::api
