// The subscriptions' routes (handler_deps.h, docs/http-api.md#subscriptions).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "api/envelope.h"
#include "api/handler_deps.h"
#include "api/strict_json.h"
#include "common/ids.h"
#include "common/time_format.h"
#include "common/utf8.h"
#include "usecase/subscriptions.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using Request = http::HttpRequest;
using Response = http::HttpResponse;
using store::Subscription;
using store::SubscriptionRun;

constexpr int kDefaultLimit = 20;
constexpr int kMaxLimit = 100;
constexpr int kRunsDefault = 50;
constexpr int kRunsMax = 200;

json OptionalTime(const std::optional<int64_t>& ms) {
  return ms ? json(FormatIsoMillis(*ms)) : json(nullptr);
}
json OptionalText(const std::optional<std::string>& text) {
  return text ? json(*text) : json(nullptr);
}
// Stored JSON is ours: parsed tolerantly, `fallback` if it ever is not.
json StoredJson(const std::string& text, json fallback) {
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? fallback : parsed;
}

json SubscriptionToJson(const usecase::SubscriptionView& view) {
  const Subscription& s = view.subscription;
  json schedule = StoredJson(s.spec.schedule_json, json::object());
  if (!schedule.is_object()) schedule = json::object();
  schedule["cron"] = s.spec.cron;
  json next_runs = json::array();
  for (int64_t at : view.next_runs) next_runs.push_back(FormatIsoMillis(at));
  return {{"id", Int64String(s.id)},
          {"exportType", s.spec.export_type},
          {"format", s.spec.format},
          {"taskName", s.spec.task_name},
          {"parameters", StoredJson(s.spec.parameters_json, json::object())},
          {"locale", s.spec.locale.empty() ? json(nullptr) : json(s.spec.locale)},
          {"schedule", std::move(schedule)},
          {"timeZone", s.spec.time_zone},
          {"businessDaysOnly", s.spec.business_days_only},
          {"delivery", StoredJson(s.spec.delivery_json, json::object())},
          {"state", std::string(store::ToString(s.state))},
          {"pauseReason", OptionalText(s.pause_reason)},
          {"pauseDetail", OptionalText(s.pause_detail)},
          {"consecutiveFailures", s.consecutive_failures},
          {"lastRunAt", OptionalTime(s.last_slot_at)},
          {"nextRunAt", OptionalTime(s.next_slot_at)},
          {"nextRuns", std::move(next_runs)},
          {"createdAt", FormatIsoMillis(s.created_at)},
          {"updatedAt", FormatIsoMillis(s.updated_at)},
          {"version", s.version},
          {"owner", s.spec.owner}};
}

json RunToJson(const SubscriptionRun& run) {
  return {{"slotAt", FormatIsoMillis(run.slot_at)},
          {"outcome", std::string(store::ToString(run.outcome))},
          {"taskId", run.task_id ? Int64String(*run.task_id) : json(nullptr)},
          {"detail", OptionalText(run.detail)},
          {"firedAt", FormatIsoMillis(run.fired_at)}};
}

StatusOr<json> ReadBody(const Request& req) {
  EC_RETURN_IF_ERROR(CheckJsonContentType(req.Header("Content-Type")));
  return ParseStrictJson(req.body);
}

const std::string* QueryValue(const Request& req, const char* name) {
  auto found = req.query.find(name);
  return found == req.query.end() ? nullptr : &found->second;
}

// `limit`: 1..max digits, `fallback` when absent.
StatusOr<int> ReadLimit(const Request& req, int fallback, int max) {
  const std::string* text = QueryValue(req, "limit");
  if (text == nullptr || text->empty()) return fallback;
  std::optional<int64_t> n = ParseId(*text);
  if (!n || *n < 1 || *n > max) {
    return InvalidArgument("limit must be a number from 1 to " + std::to_string(max));
  }
  return static_cast<int>(*n);
}

// `cursor`: the nextCursor of the page before (a subscription id), 0 when absent.
StatusOr<int64_t> ReadCursor(const Request& req) {
  const std::string* text = QueryValue(req, "cursor");
  if (text == nullptr || text->empty()) return int64_t{0};
  std::optional<int64_t> id = ParseId(*text);
  if (!id) return InvalidArgument("cursor must be the nextCursor of the page before");
  return *id;
}

// {"items": [...], "nextCursor": the last id when the page is full, else null}.
json Page(const std::vector<usecase::SubscriptionView>& views, int limit) {
  json items = json::array();
  for (const auto& v : views) items.push_back(SubscriptionToJson(v));
  json next = static_cast<int>(views.size()) == limit && !views.empty()
                  ? Int64String(views.back().subscription.id)
                  : json(nullptr);
  return {{"items", std::move(items)}, {"nextCursor", std::move(next)}};
}

void WriteView(Response& res, const StatusOr<usecase::SubscriptionView>& view,
               int http_status = 200) {
  if (!view.ok()) return WriteStatus(res, view.status());
  WriteEnvelope(res, http_status, SuccessEnvelope(SubscriptionToJson(*view)));
}

bool IsOperator(const Principal& p) {
  return p.HasPerm(usecase::kSubscriptionOperatePermission) ||
         p.HasPerm(usecase::kSubscriptionOperateAllPermission);
}

Status NotAnOperator() {
  return PermissionDenied(std::string("the operators' console requires permission ") +
                          usecase::kSubscriptionOperatePermission + " or " +
                          usecase::kSubscriptionOperateAllPermission);
}

}  // namespace

std::vector<Route> SubscriptionHandlers::Routes() {
  if (deps_.subscriptions.ledger == nullptr) return {};
  using H = SubscriptionHandlers;
  const std::string one = "/subscriptions/{id}";
  const std::string console = "/operator/subscriptions";
  return {
      FamilyRoute(this, "POST", "/subscriptions", &H::Create),
      FamilyRoute(this, "GET", "/subscriptions", &H::List),
      FamilyRoute(this, "GET", one, &H::Get),
      FamilyRoute(this, "PUT", one, &H::Edit),
      FamilyRoute(this, "DELETE", one, &H::Delete),
      FamilyRoute(this, "POST", one + "/pause", &H::Pause),
      FamilyRoute(this, "POST", one + "/resume", &H::Resume),
      FamilyRoute(this, "POST", one + "/run", &H::RunNow),
      FamilyRoute(this, "GET", one + "/runs", &H::Runs),
      FamilyRoute(this, "GET", console, &H::ConsoleList),
      FamilyRoute(this, "POST", console + "/{id}/pause", &H::ConsolePause),
      FamilyRoute(this, "POST", console + "/{id}/resume", &H::ConsoleResume),
  };
}

void SubscriptionHandlers::Create(const Request& req, const Principal& p, Response& res) {
  auto body = ReadBody(req);
  if (!body.ok()) return WriteStatus(res, body.status());
  WriteView(res, usecase::CreateSubscription(deps_.subscriptions, p, *body), 201);
}

void SubscriptionHandlers::List(const Request& req, const Principal& p, Response& res) {
  auto limit = ReadLimit(req, kDefaultLimit, kMaxLimit);
  if (!limit.ok()) return WriteStatus(res, limit.status());
  auto after = ReadCursor(req);
  if (!after.ok()) return WriteStatus(res, after.status());
  auto views = usecase::ListOwnSubscriptions(deps_.subscriptions, p, *after, *limit);
  if (!views.ok()) return WriteStatus(res, views.status());
  WriteSuccess(res, Page(*views, *limit));
}

void SubscriptionHandlers::Get(const Request& req, const Principal& p, Response& res) {
  WriteView(res, usecase::GetSubscription(deps_.subscriptions, p, req.PathParam(0)));
}

void SubscriptionHandlers::Edit(const Request& req, const Principal& p, Response& res) {
  auto body = ReadBody(req);
  if (!body.ok()) return WriteStatus(res, body.status());
  WriteView(res, usecase::EditSubscription(deps_.subscriptions, p, req.PathParam(0), *body));
}

void SubscriptionHandlers::Delete(const Request& req, const Principal& p, Response& res) {
  Status deleted = usecase::DeleteSubscription(deps_.subscriptions, p, req.PathParam(0));
  if (!deleted.ok()) return WriteStatus(res, deleted);
  res.status = 204;
}

void SubscriptionHandlers::Pause(const Request& req, const Principal& p, Response& res) {
  WriteView(res, usecase::PauseSubscription(deps_.subscriptions, p, req.PathParam(0)));
}

void SubscriptionHandlers::Resume(const Request& req, const Principal& p, Response& res) {
  WriteView(res, usecase::ResumeSubscription(deps_.subscriptions, p, req.PathParam(0)));
}

// The console's rows are the operators': the same use cases, an operator's
// permission required first.
void SubscriptionHandlers::ConsolePause(const Request& req, const Principal& p, Response& res) {
  if (!IsOperator(p)) return WriteStatus(res, NotAnOperator());
  Pause(req, p, res);
}

void SubscriptionHandlers::ConsoleResume(const Request& req, const Principal& p, Response& res) {
  if (!IsOperator(p)) return WriteStatus(res, NotAnOperator());
  Resume(req, p, res);
}

void SubscriptionHandlers::RunNow(const Request& req, const Principal& p, Response& res) {
  auto run = usecase::RunSubscriptionNow(deps_.subscriptions, p, req.PathParam(0));
  if (!run.ok()) return WriteStatus(res, run.status());
  WriteEnvelope(res, 202, SuccessEnvelope({{"run", RunToJson(*run)}}));
}

void SubscriptionHandlers::Runs(const Request& req, const Principal& p, Response& res) {
  auto limit = ReadLimit(req, kRunsDefault, kRunsMax);
  if (!limit.ok()) return WriteStatus(res, limit.status());
  auto runs = usecase::ListSubscriptionRuns(deps_.subscriptions, p, req.PathParam(0), *limit);
  if (!runs.ok()) return WriteStatus(res, runs.status());
  json items = json::array();
  for (const SubscriptionRun& run : *runs) items.push_back(RunToJson(run));
  WriteSuccess(res, {{"items", std::move(items)}});
}

void SubscriptionHandlers::ConsoleList(const Request& req, const Principal& p, Response& res) {
  auto limit = ReadLimit(req, kDefaultLimit, kMaxLimit);
  if (!limit.ok()) return WriteStatus(res, limit.status());
  auto after = ReadCursor(req);
  if (!after.ok()) return WriteStatus(res, after.status());
  std::optional<store::SubscriptionState> state;
  if (const std::string* text = QueryValue(req, "state"); text != nullptr && !text->empty()) {
    if (*text == "ACTIVE") {
      state = store::SubscriptionState::kActive;
    } else if (*text == "PAUSED") {
      state = store::SubscriptionState::kPaused;
    } else {
      return WriteStatus(res, InvalidArgument("state must be ACTIVE or PAUSED"));
    }
  }
  const std::string* tenant = QueryValue(req, "tenant");
  if (tenant != nullptr && (tenant->size() > 64 || !utf8::IsValid(*tenant))) {
    return WriteStatus(res, InvalidArgument("invalid tenant filter"));
  }
  auto views = usecase::ListScopeSubscriptions(
      deps_.subscriptions, p, tenant ? *tenant : std::string(), state, *after, *limit);
  if (!views.ok()) return WriteStatus(res, views.status());
  json page = Page(*views, *limit);
  // The console's view adds where each one lives.
  for (size_t i = 0; i < views->size(); ++i) {
    page["items"][i]["tenantId"] = (*views)[i].subscription.spec.tenant_id;
    page["items"][i]["appCode"] = (*views)[i].subscription.spec.app_code;
  }
  WriteSuccess(res, std::move(page));
}

}  // namespace export_center::api
