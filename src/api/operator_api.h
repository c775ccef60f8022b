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
// instance answers the same; the bulk action is a use case
// (usecase/bulk_action.h), the routes rows of ExportApi's one table. Thread-safe: the handlers
// share no mutable state.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "api/route.h"
#include "common/status.h"
#include "http/http_request.h"
#include "http/http_response.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "store/mail_outbox.h"
#include "store/task_catalog.h"
#include "store/task_operations.h"
#include "usecase/bulk_action.h"

namespace export_center::api {

using identity::Principal;

inline constexpr std::string_view kOperatePermission = "platform:export:operate";
inline constexpr std::string_view kOperateAllPermission = "platform:export:operate-all";

struct OperatorApiDeps {
  store::TaskOperations* operations = nullptr;  // not owned
  store::TaskCatalog* catalog = nullptr;        // the single retry and cancel
  registry::Registry* registry = nullptr;       // not owned
  // The mail outbox (subscriptions' mail; not owned). Optional: unset, the
  // mail routes answer 503.
  store::MailOutbox* mails = nullptr;
  // Called once after a bulk retry re-queued tasks (wakes the publisher). Optional.
  std::function<void()> on_task_created;
  // A bulk action matching more tasks than this is refused (LimitExceeded).
  int bulk_max_tasks = 5000;
  int bulk_batch_size = 100;
};

class OperatorApi {
 public:
  explicit OperatorApi(OperatorApiDeps deps);

  // The routes, patterns relative to kApiBase (e.g. "/operator/tasks/{id}"),
  // each needing a verified caller: ExportApi adds them to its one table.
  std::vector<Route> Routes();

 private:
  void Search(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void TaskDetail(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void CountBulk(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void RunBulk(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void ListBulk(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void Stats(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void QueueHealth(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void Redeliver(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  // The subscriptions' dead mails and their re-delivery (GET /operator/mails?status=DEAD,
  // POST /operator/mails/{id}/redeliver).
  void DeadMails(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res) const;
  void RedeliverMail(const http::HttpRequest& req, const Principal& p,
                     http::HttpResponse& res) const;
  // The audit row of an operator's re-delivery (`what`: {"notificationId": …} or {"mailId": …}).
  void AuditRedelivery(const Principal& p, const store::OperatorScope& scope,
                       const nlohmann::json& what, const std::string& request_id) const;

  OperatorApiDeps deps_;
  usecase::BulkDeps bulk_;  // the bulk action's use case (usecase/bulk_action.h)
};

}  // namespace export_center::api
