#include "api/operator_api.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "api/download_audit.h"
#include "api/envelope.h"
#include "api/query_params.h"
#include "api/strict_json.h"
#include "api/task_json.h"
#include "common/ids.h"
#include "common/time_format.h"
#include "common/utf8.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using http::HttpRequest;
using http::HttpResponse;
using task::TaskState;

constexpr int64_t kDayMs = 24 * 60 * 60 * 1000LL;

json OptionalTime(const std::optional<int64_t>& ms) {
  return ms ? json(FormatIsoMillis(*ms)) : json(nullptr);
}
json OptionalText(const std::optional<std::string>& text) {
  return text ? json(*text) : json(nullptr);
}

// The scope the caller may see (docs/http-api.md#operators-console):
// operate-all sees every tenant (or the one ?tenantId= names), operate its own
// tenant and app. PermissionDenied for anyone else, and for an operate
// caller naming another tenant.
StatusOr<store::OperatorScope> ScopeOf(const Principal& p, const std::string& tenant_param) {
  if (p.HasPerm(kOperateAllPermission)) {
    if (tenant_param.empty()) return store::OperatorScope{};
    return store::OperatorScope{tenant_param, std::nullopt};
  }
  if (!p.HasPerm(kOperatePermission)) {
    return PermissionDenied("the operators' console requires permission " +
                            std::string(kOperatePermission) + " or " +
                            std::string(kOperateAllPermission));
  }
  if (!tenant_param.empty() && tenant_param != p.tenant) {
    return PermissionDenied("other tenants need permission " + std::string(kOperateAllPermission));
  }
  return store::OperatorScope{p.tenant, p.app};
}

bool InScope(const store::OperatorScope& scope, const task::Task& t) {
  if (!scope.tenant_id) return true;
  return t.tenant_id == *scope.tenant_id && (!scope.app_code || t.app_code == *scope.app_code);
}

// A text filter value: 1..max bytes of valid UTF-8.
Status CheckText(const char* name, const std::string& value, size_t max_bytes) {
  if (value.empty() || value.size() > max_bytes || !utf8::IsValid(value)) {
    return InvalidArgument(std::string("invalid ") + name + " filter");
  }
  return Status::Ok();
}

Status ParseStates(const std::string& text, std::vector<TaskState>* out) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string one = text.substr(start, comma - start);
    auto state = task::ParseTaskState(one);
    if (!state) return InvalidArgument("unknown status " + utf8::Excerpt(one, 40));
    out->push_back(*state);
    start = comma + 1;
  }
  return Status::Ok();
}

// The filter's fields, read from the query or from a bulk action's body by
// `get` (nullopt: absent). `echo` receives the filter as given, for the audit.
StatusOr<store::OperatorFilter> ParseFilter(
    const Principal& p, const std::function<StatusOr<std::optional<std::string>>(const char*)>& get,
    json* echo) {
  auto field = [&](const char* name, size_t max_bytes) -> StatusOr<std::optional<std::string>> {
    EC_ASSIGN_OR_RETURN(std::optional<std::string> value, get(name));
    if (!value) return value;
    EC_RETURN_IF_ERROR(CheckText(name, *value, max_bytes));
    (*echo)[name] = *value;
    return value;
  };
  store::OperatorFilter f;
  EC_ASSIGN_OR_RETURN(std::optional<std::string> tenant, field("tenantId", 64));
  EC_ASSIGN_OR_RETURN(f.scope, ScopeOf(p, tenant.value_or("")));
  EC_ASSIGN_OR_RETURN(f.requested_by, field("user", 128));
  EC_ASSIGN_OR_RETURN(f.export_type, field("exportType", 128));
  EC_ASSIGN_OR_RETURN(f.failure_code, field("failureCode", 64));
  EC_ASSIGN_OR_RETURN(std::optional<std::string> status, field("status", 200));
  if (status) EC_RETURN_IF_ERROR(ParseStates(*status, &f.any_status));
  for (const char* name : {"from", "to"}) {
    EC_ASSIGN_OR_RETURN(std::optional<std::string> time, field(name, 40));
    if (!time) continue;
    auto ms = ParseIsoMillis(*time);
    if (!ms) return InvalidArgument(std::string(name) + " must be an ISO 8601 UTC time");
    (std::string_view(name) == "from" ? f.from_ms : f.to_ms) = *ms;
  }
  if (f.from_ms && f.to_ms && *f.from_ms >= *f.to_ms) {
    return InvalidArgument("from must be before to");
  }
  return f;
}

// A bulk action's body; `echo` receives the filter as given.
struct BulkRequest {
  usecase::BulkRequest request;
  json filter_echo = json::object();
};

StatusOr<BulkRequest> ParseBulkRequest(const HttpRequest& req, const Principal& p) {
  EC_RETURN_IF_ERROR(CheckJsonContentType(req.Header("Content-Type")));
  EC_ASSIGN_OR_RETURN(json body, ParseStrictJson(req.body));
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key != "action" && key != "filter" && key != "expectedCount" &&
        key != "expectedFingerprint") {
      return InvalidArgument("unknown field " + utf8::Excerpt(key, 40));
    }
  }
  BulkRequest parsed;
  usecase::BulkRequest& r = parsed.request;
  if (!body.contains("action") || !body["action"].is_string() ||
      (body["action"] != "RETRY" && body["action"] != "CANCEL")) {
    return InvalidArgument("action must be RETRY or CANCEL");
  }
  r.action = body["action"].get<std::string>();
  const json filter = body.value("filter", json::object());
  if (!filter.is_object()) return InvalidArgument("filter must be an object");
  static const std::set<std::string> kFields = {"tenantId",    "user", "exportType", "status",
                                                "failureCode", "from", "to"};
  for (const auto& [key, value] : filter.items()) {
    if (!kFields.count(key))
      return InvalidArgument("unknown filter field " + utf8::Excerpt(key, 40));
    if (!value.is_string()) return InvalidArgument("filter." + key + " must be a string");
  }
  auto get = [&](const char* name) -> StatusOr<std::optional<std::string>> {
    if (!filter.contains(name)) return std::optional<std::string>();
    return std::optional<std::string>(filter[name].get<std::string>());
  };
  EC_ASSIGN_OR_RETURN(r.filter, ParseFilter(p, get, &parsed.filter_echo));
  r.filter_json = parsed.filter_echo.dump();
  if (body.contains("expectedCount")) {
    const json& expected = body["expectedCount"];
    std::optional<int64_t> n;
    if (expected.is_string())
      n = expected.get<std::string>() == "0" ? std::optional<int64_t>(0)
                                             : ParseId(expected.get<std::string>());
    if (!n) return InvalidArgument("expectedCount must be a count as a string of digits");
    r.expected_count = n;
  }
  if (body.contains("expectedFingerprint") && !body["expectedFingerprint"].is_null()) {
    const json& expected = body["expectedFingerprint"];
    if (!expected.is_string() || expected.get<std::string>().size() != 64) {
      return InvalidArgument("expectedFingerprint must be the fingerprint the count answered");
    }
    r.expected_fingerprint = expected.get<std::string>();
  }
  return parsed;
}

json BulkToJson(const store::BulkActionRecord& b) {
  json filter = json::parse(b.filter_json, nullptr, false);
  json app = b.scope_app ? json(std::string(task::ToString(*b.scope_app))) : json(nullptr);
  return {{"id", Int64String(b.id)},
          {"actor", b.actor},
          {"actorTenant", b.actor_tenant},
          {"scopeTenant", OptionalText(b.scope_tenant)},
          {"scopeApp", std::move(app)},
          {"action", b.action},
          {"filter", filter.is_discarded() ? json::object() : filter},
          {"matched", Int64String(b.matched)},
          {"succeeded", Int64String(b.succeeded)},
          {"skipped", Int64String(b.skipped)},
          {"failed", Int64String(b.failed)},
          {"outcome", b.outcome},
          {"firstError", OptionalText(b.first_error)},
          {"startedAt", FormatIsoMillis(b.started_at)},
          {"finishedAt", OptionalTime(b.finished_at)}};
}

json OptionalInt(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

json StatsToJson(const store::TypeStats& s) {
  json codes = json::array();
  for (const auto& c : s.top_failure_codes) {
    codes.push_back({{"code", c.code}, {"count", Int64String(c.count)}});
  }
  json rate = s.ended > 0 ? json(static_cast<double>(s.succeeded) / s.ended) : json(nullptr);
  return {{"exportType", s.export_type},
          {"count", Int64String(s.count)},
          {"ended", Int64String(s.ended)},
          {"succeeded", Int64String(s.succeeded)},
          {"successRate", rate},
          {"waitP50Ms", OptionalInt(s.wait_p50_ms)},
          {"waitP95Ms", OptionalInt(s.wait_p95_ms)},
          {"durationP50Ms", OptionalInt(s.duration_p50_ms)},
          {"durationP95Ms", OptionalInt(s.duration_p95_ms)},
          {"rowsPerSecond", s.rows_per_second ? json(*s.rows_per_second) : json(nullptr)},
          {"bytes", Int64String(s.bytes)},
          {"topFailureCodes", std::move(codes)}};
}

json NotificationToJson(const store::NotificationEntry& n) {
  return {{"id", Int64String(n.id)},
          {"eventId", n.event_id},
          {"receiverId", n.receiver_id},
          {"taskId", Int64String(n.task_id)},
          {"dispatchVersion", n.dispatch_version},
          {"taskStatus", n.task_status},
          {"status", std::string(store::ToString(n.status))},
          {"attemptCount", n.attempt_count},
          {"nextRetryAt", FormatIsoMillis(n.next_retry_at)},
          {"deliveredAt", OptionalTime(n.delivered_at)},
          {"lastError", OptionalText(n.last_error)},
          {"createdAt", FormatIsoMillis(n.created_at)}};
}

json CommandToJson(const store::OutboxEntry& o) {
  return {{"id", Int64String(o.id)},
          {"eventId", o.event_id},
          {"dispatchVersion", o.dispatch_version},
          {"status", std::string(store::ToString(o.status))},
          {"attemptCount", o.attempt_count},
          {"nextRetryAt", FormatIsoMillis(o.next_retry_at)},
          {"leaseOwner", OptionalText(o.lease_owner)},
          {"sentAt", OptionalTime(o.sent_at)},
          {"lastError", OptionalText(o.last_error)},
          {"createdAt", FormatIsoMillis(o.created_at)}};
}

// The operator's view of a task: the user's JSON plus who and where.
json OperatorTaskJson(const task::Task& t) {
  json j = TaskToJson(t);
  j["tenantId"] = t.tenant_id;
  j["appCode"] = std::string(task::ToString(t.app_code));
  j["requestedBy"] = t.requested_by;
  j["leaseOwner"] = OptionalText(t.lease.owner);
  j["leaseUntil"] = OptionalTime(t.lease.until);
  j["lastHeartbeatAt"] = OptionalTime(t.lease.last_heartbeat_at);
  // Why it failed, in full: the user sees failureMessage, classified.
  j["failureDetail"] = OptionalText(t.failure_detail);
  return j;
}

}  // namespace

OperatorApi::OperatorApi(OperatorApiDeps deps) : deps_(std::move(deps)) {
  bulk_.operations = deps_.operations;
  bulk_.catalog = deps_.catalog;
  bulk_.registry = deps_.registry;
  bulk_.on_requeued = deps_.on_task_created;
  bulk_.max_tasks = deps_.bulk_max_tasks;
  bulk_.batch_size = deps_.bulk_batch_size;
}

std::vector<Route> OperatorApi::Routes() {
  using Endpoint = void (OperatorApi::*)(const HttpRequest&, const Principal&, HttpResponse&) const;
  auto row = [this](const char* method, const char* pattern, Endpoint fn) {
    return Route{method, pattern, RouteNeeds::kCaller,
                 [this, fn](const HttpRequest& req, const Principal& p, HttpResponse& res) {
                   (this->*fn)(req, p, res);
                 }};
  };
  return {
      row("GET", "/operator/tasks", &OperatorApi::Search),
      row("GET", "/operator/tasks/{id}", &OperatorApi::TaskDetail),
      row("POST", "/operator/bulk-actions/count", &OperatorApi::CountBulk),
      row("POST", "/operator/bulk-actions", &OperatorApi::RunBulk),
      row("GET", "/operator/bulk-actions", &OperatorApi::ListBulk),
      row("GET", "/operator/stats", &OperatorApi::Stats),
      row("GET", "/operator/queue-health", &OperatorApi::QueueHealth),
      row("POST", "/operator/notifications/{id}/redeliver", &OperatorApi::Redeliver),
      row("GET", "/operator/mails", &OperatorApi::DeadMails),
      row("POST", "/operator/mails/{id}/redeliver", &OperatorApi::RedeliverMail),
  };
}

// ---- GET /operator/tasks ---------------------------------------------------------

void OperatorApi::Search(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  auto get = [&](const char* name) -> StatusOr<std::optional<std::string>> {
    if (!req.HasQuery(name) || req.Query(name).empty()) return std::optional<std::string>();
    return std::optional<std::string>(req.Query(name));
  };
  json echo = json::object();
  auto filter = ParseFilter(p, get, &echo);
  if (!filter.ok()) return WriteStatus(res, filter.status());
  int page = 1, size = 20;
  if (Status s = ReadPageParams(req, &page, &size); !s.ok()) return WriteStatus(res, s);
  auto after = ReadPageCursor(req);
  if (!after.ok()) return WriteStatus(res, after.status());
  auto found = deps_.operations->SearchTasks(*filter, page, size, *after);
  if (!found.ok()) return WriteStatus(res, found.status());
  json records = json::array();
  for (const auto& t : found->records) records.push_back(OperatorTaskJson(t));
  json data = PageFields(found->total, found->total_is_exact, found->next, page, size);
  data["records"] = std::move(records);
  WriteSuccess(res, std::move(data));
}

// ---- GET /operator/tasks/{id} ----------------------------------------------------

void OperatorApi::TaskDetail(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  auto scope = ScopeOf(p, "");
  if (!scope.ok()) return WriteStatus(res, scope.status());
  const std::string& id_text = req.PathParam(0);
  auto id = ParseId(id_text);
  if (!id) return WriteStatus(res, InvalidArgument("task id must be 1-19 digits"));
  auto t = deps_.operations->GetTask(*id);
  if ((!t.ok() && t.status().code() == StatusCode::kNotFound) || (t.ok() && !InScope(*scope, *t))) {
    return WriteStatus(res, NotFound("export task " + id_text + " not found"));
  }
  if (!t.ok()) return WriteStatus(res, t.status());
  auto dispatch = deps_.operations->ReadTaskDispatch(*id);
  if (!dispatch.ok()) return WriteStatus(res, dispatch.status());
  // The timeline rides along: GET /export-tasks/{id}/timeline reads a task as
  // its requester may, which an operator of another user's task is not.
  auto events = deps_.catalog->ListTaskEvents(*id);
  if (!events.ok()) return WriteStatus(res, events.status());
  json commands = json::array(), notifications = json::array(), timeline = json::array();
  for (const auto& c : dispatch->commands) commands.push_back(CommandToJson(c));
  for (const auto& n : dispatch->notifications) notifications.push_back(NotificationToJson(n));
  const TimelineReader reader{.names_downloaders = p.HasPerm(kAuditReadPermission),
                              .raw_errors = true};
  for (const auto& e : *events) timeline.push_back(TaskEventToJson(e, reader));
  WriteSuccess(res, {{"task", OperatorTaskJson(*t)},
                     {"commands", std::move(commands)},
                     {"notifications", std::move(notifications)},
                     {"timeline", std::move(timeline)}});
}

// ---- bulk actions ---------------------------------------------------------------------

void OperatorApi::CountBulk(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  auto r = ParseBulkRequest(req, p);
  if (!r.ok()) return WriteStatus(res, r.status());
  auto count = usecase::CountBulkAction(bulk_, r->request);
  if (!count.ok()) return WriteStatus(res, count.status());
  // Over the limit the action is refused anyway: no fingerprint to confirm.
  WriteSuccess(res,
               {{"action", r->request.action},
                {"filter", r->filter_echo},
                {"matched", Int64String(count->matched)},
                {"fingerprint", count->fingerprint ? json(*count->fingerprint) : json(nullptr)},
                {"limit", deps_.bulk_max_tasks}});
}

void OperatorApi::RunBulk(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  auto r = ParseBulkRequest(req, p);
  if (!r.ok()) return WriteStatus(res, r.status());
  auto audit = usecase::RunBulkAction(bulk_, p, r->request, res.Header("X-Request-Id"));
  if (!audit.ok()) return WriteStatus(res, audit.status());
  WriteSuccess(res, BulkToJson(*audit));
}

void OperatorApi::ListBulk(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  auto scope = ScopeOf(p, req.Query("tenantId"));
  if (!scope.ok()) return WriteStatus(res, scope.status());
  auto rows = deps_.operations->ListBulkActions(*scope, 20);
  if (!rows.ok()) return WriteStatus(res, rows.status());
  json records = json::array();
  for (const auto& b : *rows) records.push_back(BulkToJson(b));
  WriteSuccess(res, {{"records", std::move(records)}});
}

// ---- figures ----------------------------------------------------------------------------

void OperatorApi::Stats(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  auto scope = ScopeOf(p, req.Query("tenantId"));
  if (!scope.ok()) return WriteStatus(res, scope.status());
  json windows = json::array();
  for (const auto& [name, ms] : {std::pair<const char*, int64_t>{"24h", kDayMs},
                                 std::pair<const char*, int64_t>{"7d", 7 * kDayMs}}) {
    auto stats = deps_.operations->ReadTypeStats(*scope, ms);
    if (!stats.ok()) return WriteStatus(res, stats.status());
    json types = json::array();
    for (const auto& s : *stats) types.push_back(StatsToJson(s));
    windows.push_back({{"window", name}, {"types", std::move(types)}});
  }
  WriteSuccess(res, {{"windows", std::move(windows)}});
}

void OperatorApi::QueueHealth(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  auto scope = ScopeOf(p, req.Query("tenantId"));
  if (!scope.ok()) return WriteStatus(res, scope.status());
  auto health = deps_.operations->ReadQueueHealth(*scope);
  if (!health.ok()) return WriteStatus(res, health.status());
  auto dead = deps_.operations->ListDeadNotifications(*scope, 50);
  if (!dead.ok()) return WriteStatus(res, dead.status());
  json running = json::array(), dead_rows = json::array();
  for (const auto& r : health->running_per_instance) {
    running.push_back({{"instance", r.instance}, {"running", Int64String(r.running)}});
  }
  for (const auto& n : *dead) dead_rows.push_back(NotificationToJson(n));
  WriteSuccess(res, {{"dueCommands", Int64String(health->due_commands)},
                     {"oldestDueAgeMs", OptionalInt(health->oldest_due_age_ms)},
                     {"runningPerInstance", std::move(running)},
                     {"deadNotifications", Int64String(health->dead_notifications)},
                     {"deadDeliveries", std::move(dead_rows)}});
}

void OperatorApi::Redeliver(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  const std::string& request_id = res.Header("X-Request-Id");
  auto scope = ScopeOf(p, "");
  if (!scope.ok()) return WriteStatus(res, scope.status());
  auto id = ParseId(req.PathParam(0));
  if (!id) return WriteStatus(res, InvalidArgument("notification id must be 1-19 digits"));
  Status s = deps_.operations->RedeliverNotification(*scope, *id);
  if (!s.ok()) return WriteStatus(res, s);
  AuditRedelivery(p, *scope, json{{"notificationId", std::to_string(*id)}}, request_id);
  spdlog::info("notification re-delivery id={} actor={}", *id, p.user);
  WriteSuccess(res, {{"id", Int64String(*id)}, {"status", "PENDING"}});
}

void OperatorApi::AuditRedelivery(const Principal& p, const store::OperatorScope& scope,
                                  const json& what, const std::string& request_id) const {
  // A re-delivery is an operator's action like a bulk one: on the same record.
  store::BulkActionRecord audit;
  audit.actor = p.user;
  audit.actor_tenant = p.tenant;
  audit.scope_tenant = scope.tenant_id;
  audit.scope_app = scope.app_code;
  audit.action = "REDELIVER";
  audit.filter_json = what.dump();
  audit.matched = 1;
  audit.succeeded = 1;
  audit.outcome = "COMPLETED";
  auto audit_id = deps_.operations->BeginBulkAction(audit);
  Status audited = audit_id.status();
  if (audit_id.ok()) {
    audit.id = *audit_id;
    audited = deps_.operations->FinishBulkAction(audit);
  }
  if (!audited.ok()) {
    spdlog::error("re-delivery {} not audited request_id={}: {}", what.dump(), request_id,
                  audited.ToString());
  }
}

// ---- the subscriptions' mail -----------------------------------------------------

namespace {

store::MailScope MailScopeOf(const store::OperatorScope& scope) {
  store::MailScope out;
  out.tenant_id = scope.tenant_id;
  if (scope.app_code) out.app_code = std::string(task::ToString(*scope.app_code));
  return out;
}

json MailToJson(const store::MailEntry& m) {
  return {{"id", Int64String(m.id)},
          {"messageId", m.message_id},
          {"subscriptionId",
           m.mail.subscription_id ? json(Int64String(*m.mail.subscription_id)) : json(nullptr)},
          {"taskId", m.mail.task_id ? json(Int64String(*m.mail.task_id)) : json(nullptr)},
          {"recipients", m.mail.recipients},
          {"subject", m.mail.subject},
          {"attached", m.mail.attachment_key.has_value()},
          {"status", std::string(store::ToString(m.status))},
          {"attemptCount", m.attempt_count},
          {"lastError", OptionalText(m.last_error)},
          {"createdAt", FormatIsoMillis(m.created_at)},
          {"deliveredAt", OptionalTime(m.delivered_at)}};
}

constexpr int kDefaultMailLimit = 50;
constexpr int kMaxMailLimit = 200;

}  // namespace

void OperatorApi::DeadMails(const HttpRequest& req, const Principal& p, HttpResponse& res) const {
  auto scope = ScopeOf(p, req.HasQuery("tenantId") ? req.Query("tenantId") : "");
  if (!scope.ok()) return WriteStatus(res, scope.status());
  if (deps_.mails == nullptr) return WriteHttpError(res, 503, "mail is not available here");
  const std::string status = req.HasQuery("status") ? req.Query("status") : "DEAD";
  if (status != "DEAD") {
    return WriteStatus(res, InvalidArgument("status: only DEAD mails are listed, not '" +
                                            utf8::Excerpt(status, 40) + "'"));
  }
  int limit = kDefaultMailLimit;
  if (req.HasQuery("limit")) {
    auto n = ParseId(req.Query("limit"));
    if (!n || *n > kMaxMailLimit) {
      return WriteStatus(
          res, InvalidArgument("limit: a number from 1 to " + std::to_string(kMaxMailLimit)));
    }
    limit = static_cast<int>(*n);
  }
  auto dead = deps_.mails->ListDeadMails(limit, MailScopeOf(*scope));
  if (!dead.ok()) return WriteStatus(res, dead.status());
  json items = json::array();
  for (const store::MailEntry& m : *dead) items.push_back(MailToJson(m));
  WriteSuccess(res, {{"items", std::move(items)}});
}

void OperatorApi::RedeliverMail(const HttpRequest& req, const Principal& p,
                                HttpResponse& res) const {
  auto scope = ScopeOf(p, "");
  if (!scope.ok()) return WriteStatus(res, scope.status());
  if (deps_.mails == nullptr) return WriteHttpError(res, 503, "mail is not available here");
  auto id = ParseId(req.PathParam(0));
  if (!id) return WriteStatus(res, InvalidArgument("mail id must be 1-19 digits"));
  Status s = deps_.mails->RedeliverMail(*id, MailScopeOf(*scope));
  if (!s.ok()) return WriteStatus(res, s);
  AuditRedelivery(p, *scope, json{{"mailId", std::to_string(*id)}}, res.Header("X-Request-Id"));
  spdlog::info("mail re-delivery id={} actor={}", *id, p.user);
  WriteSuccess(res, {{"id", Int64String(*id)}, {"status", "PENDING"}});
}

}  // namespace export_center::api
