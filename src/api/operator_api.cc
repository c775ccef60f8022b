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
#include "common/byte_sink.h"
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

// The states an action applies to, narrowed by the filter's own.
std::vector<TaskState> ActionStates(const std::string& action,
                                    const std::vector<TaskState>& wanted) {
  const std::vector<TaskState> applies =
      action == "RETRY" ? std::vector<TaskState>{TaskState::kFailed, TaskState::kCancelled,
                                                 TaskState::kInconsistent}
                        : std::vector<TaskState>{TaskState::kPending, TaskState::kRunning};
  if (wanted.empty()) return applies;
  std::vector<TaskState> both;
  for (TaskState s : applies) {
    if (std::find(wanted.begin(), wanted.end(), s) != wanted.end()) both.push_back(s);
  }
  return both;
}

struct BulkRequest {
  std::string action;  // RETRY | CANCEL
  store::OperatorFilter filter;
  json filter_echo = json::object();
  bool nothing_applies = false;  // the filter's states exclude every state the action acts on
  std::optional<int64_t> expected_count;
  std::optional<std::string> expected_fingerprint;
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
  BulkRequest r;
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
  EC_ASSIGN_OR_RETURN(r.filter, ParseFilter(p, get, &r.filter_echo));
  r.filter.any_status = ActionStates(r.action, r.filter.any_status);
  r.nothing_applies = r.filter.any_status.empty();
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
  return r;
}

StatusOr<int64_t> CountOf(store::TaskOperations& ops, const BulkRequest& r) {
  if (r.nothing_applies) return int64_t{0};
  return ops.CountTasks(r.filter);
}

// Digests bytes and keeps none.
class DiscardSink final : public ByteSink {
 public:
  Status Append(std::string_view) override { return Status::Ok(); }
};

// The matched set: the ids of the tasks the action would act on, ascending,
// at most `max` of them (the caller knows there are no more), and its
// fingerprint (SHA-256 of the ids as decimal text, each followed by a comma).
// The count alone would let a confirmation act on other tasks that came to
// match while an equal number stopped matching.
struct MatchedSet {
  std::vector<int64_t> ids;
  std::string fingerprint;
};

StatusOr<MatchedSet> MatchedSetOf(store::TaskOperations& ops, const BulkRequest& r, int64_t max,
                                  int batch_size) {
  MatchedSet m;
  int64_t after = 0;
  while (!r.nothing_applies && static_cast<int64_t>(m.ids.size()) < max) {
    const int batch =
        static_cast<int>(std::min<int64_t>(batch_size, max - static_cast<int64_t>(m.ids.size())));
    EC_ASSIGN_OR_RETURN(std::vector<int64_t> ids, ops.ListTaskIds(r.filter, after, batch));
    if (ids.empty()) break;
    m.ids.insert(m.ids.end(), ids.begin(), ids.end());
    after = ids.back();
  }
  DiscardSink discard;
  Sha256Sink digest(&discard);
  for (int64_t id : m.ids) EC_RETURN_IF_ERROR(digest.Append(std::to_string(id) + ","));
  m.fingerprint = HexOf(digest.digest());
  return m;
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
  j["leaseOwner"] = OptionalText(t.lease_owner);
  j["leaseUntil"] = OptionalTime(t.lease_until);
  j["lastHeartbeatAt"] = OptionalTime(t.last_heartbeat_at);
  // Why it failed, in full: the user sees failureMessage, classified.
  j["failureDetail"] = OptionalText(t.failure_detail);
  return j;
}

}  // namespace

OperatorApi::OperatorApi(OperatorApiDeps deps) : deps_(std::move(deps)) {}

std::vector<OperatorApi::Route> OperatorApi::Routes() {
  auto plain = [this](void (OperatorApi::*fn)(const HttpRequest&, const Principal&, HttpResponse&)
                          const) -> Handler {
    return [this, fn](const HttpRequest& req, const Principal& p, const std::string&,
                      HttpResponse& res) { (this->*fn)(req, p, res); };
  };
  auto traced = [this](void (OperatorApi::*fn)(const HttpRequest&, const Principal&,
                                               const std::string&, HttpResponse&)
                           const) -> Handler {
    return [this, fn](const HttpRequest& req, const Principal& p, const std::string& id,
                      HttpResponse& res) { (this->*fn)(req, p, id, res); };
  };
  return {
      {"GET", "/operator/tasks", plain(&OperatorApi::Search)},
      {"GET", "/operator/tasks/{id}", plain(&OperatorApi::TaskDetail)},
      {"POST", "/operator/bulk-actions/count", plain(&OperatorApi::CountBulk)},
      {"POST", "/operator/bulk-actions", traced(&OperatorApi::RunBulk)},
      {"GET", "/operator/bulk-actions", plain(&OperatorApi::ListBulk)},
      {"GET", "/operator/stats", plain(&OperatorApi::Stats)},
      {"GET", "/operator/queue-health", plain(&OperatorApi::QueueHealth)},
      {"POST", "/operator/notifications/{id}/redeliver", traced(&OperatorApi::Redeliver)},
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
  auto matched = CountOf(*deps_.operations, *r);
  if (!matched.ok()) return WriteStatus(res, matched.status());
  // Over the limit the action is refused anyway: no fingerprint to confirm.
  json fingerprint = nullptr;
  if (*matched <= deps_.bulk_max_tasks) {
    auto set = MatchedSetOf(*deps_.operations, *r, *matched, deps_.bulk_batch_size);
    if (!set.ok()) return WriteStatus(res, set.status());
    fingerprint = set->fingerprint;
  }
  WriteSuccess(res, {{"action", r->action},
                     {"filter", r->filter_echo},
                     {"matched", Int64String(*matched)},
                     {"fingerprint", std::move(fingerprint)},
                     {"limit", deps_.bulk_max_tasks}});
}

Status OperatorApi::ActOnOne(const std::string& action, int64_t task_id,
                             const std::string& request_id) const {
  if (action == "CANCEL") return deps_.catalog->RequestCancel(task_id).status();
  EC_ASSIGN_OR_RETURN(task::Task t, deps_.operations->GetTask(task_id));
  // The single retry's rules (CheckManualRetry), but for the type's
  // permission: the operator retries on the owner's behalf.
  const registry::ExportDefinition* def = deps_.registry->Current()->Find(t.export_type);
  EC_RETURN_IF_ERROR(CheckManualRetry(t, def));
  return deps_.catalog->ManualRetry(task_id, request_id).status();
}

void OperatorApi::RunBulk(const HttpRequest& req, const Principal& p, const std::string& request_id,
                          HttpResponse& res) const {
  auto r = ParseBulkRequest(req, p);
  if (!r.ok()) return WriteStatus(res, r.status());
  if (!r->expected_count) {
    return WriteStatus(res, InvalidArgument("expectedCount is required: count first "
                                            "(POST /operator/bulk-actions/count) and confirm"));
  }
  auto matched = CountOf(*deps_.operations, *r);
  if (!matched.ok()) return WriteStatus(res, matched.status());
  if (*matched != *r->expected_count) {
    return WriteStatus(
        res, Conflict("the filter now matches " + std::to_string(*matched) + " tasks, not " +
                      std::to_string(*r->expected_count) + "; count again and confirm"));
  }
  if (*matched > deps_.bulk_max_tasks) {
    return WriteStatus(res,
                       LimitExceeded("the filter matches " + std::to_string(*matched) +
                                     " tasks; a bulk action takes at most " +
                                     std::to_string(deps_.bulk_max_tasks) + ": narrow the filter"));
  }
  if (!r->expected_fingerprint) {
    return WriteStatus(res, InvalidArgument("expectedFingerprint is required: count first "
                                            "(POST /operator/bulk-actions/count) and confirm"));
  }
  // The set confirmed, not only its size: the very tasks that were counted.
  auto set = MatchedSetOf(*deps_.operations, *r, *matched, deps_.bulk_batch_size);
  if (!set.ok()) return WriteStatus(res, set.status());
  if (set->fingerprint != *r->expected_fingerprint) {
    return WriteStatus(res, Conflict("the filter still matches " + std::to_string(*matched) +
                                     " tasks, but not the ones counted; count again and confirm"));
  }
  store::BulkActionRecord audit;
  audit.actor = p.user;
  audit.actor_tenant = p.tenant;
  audit.scope_tenant = r->filter.scope.tenant_id;
  audit.scope_app = r->filter.scope.app_code;
  audit.action = r->action;
  audit.filter_json = r->filter_echo.dump();
  audit.matched = *matched;
  auto id = deps_.operations->BeginBulkAction(audit);
  if (!id.ok()) return WriteStatus(res, id.status());
  audit.id = *id;
  // The confirmed ids in ascending order: a task that came to match after the
  // confirmation is left alone.
  audit.outcome = "COMPLETED";
  for (int64_t task_id : set->ids) {
    Status s = ActOnOne(r->action, task_id, request_id);
    if (s.ok()) {
      ++audit.succeeded;
    } else if (s.code() == StatusCode::kConflict || s.code() == StatusCode::kNotFound) {
      ++audit.skipped;  // no longer in a state the action applies to
    } else {
      ++audit.failed;
      if (!audit.first_error) {
        audit.first_error = "task " + std::to_string(task_id) + ": " + s.message();
      }
    }
  }
  if (Status s = deps_.operations->FinishBulkAction(audit); !s.ok()) {
    spdlog::error("bulk action {} finished but its audit row was not updated: {}", audit.id,
                  s.ToString());
  }
  spdlog::info(
      "bulk action id={} action={} actor={} tenantId={} matched={} succeeded={} skipped={} "
      "failed={} outcome={}",
      audit.id, audit.action, audit.actor, audit.scope_tenant.value_or("*"), audit.matched,
      audit.succeeded, audit.skipped, audit.failed, audit.outcome);
  if (r->action == "RETRY" && audit.succeeded > 0 && deps_.on_task_created) {
    deps_.on_task_created();
  }
  WriteSuccess(res, BulkToJson(audit));
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

void OperatorApi::Redeliver(const HttpRequest& req, const Principal& p,
                            const std::string& request_id, HttpResponse& res) const {
  auto scope = ScopeOf(p, "");
  if (!scope.ok()) return WriteStatus(res, scope.status());
  auto id = ParseId(req.PathParam(0));
  if (!id) return WriteStatus(res, InvalidArgument("notification id must be 1-19 digits"));
  Status s = deps_.operations->RedeliverNotification(*scope, *id);
  if (!s.ok()) return WriteStatus(res, s);
  // A re-delivery is an operator's action like a bulk one: on the same record.
  store::BulkActionRecord audit;
  audit.actor = p.user;
  audit.actor_tenant = p.tenant;
  audit.scope_tenant = scope->tenant_id;
  audit.scope_app = scope->app_code;
  audit.action = "REDELIVER";
  audit.filter_json = json{{"notificationId", std::to_string(*id)}}.dump();
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
    spdlog::error("re-delivery of notification {} not audited request_id={}: {}", *id, request_id,
                  audited.ToString());
  }
  spdlog::info("notification re-delivery id={} actor={}", *id, p.user);
  WriteSuccess(res, {{"id", Int64String(*id)}, {"status", "PENDING"}});
}

}  // namespace export_center::api
