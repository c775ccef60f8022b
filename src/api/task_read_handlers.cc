#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "api/auth.h"
#include "api/download_audit.h"
#include "api/envelope.h"
#include "api/events_ticket.h"
#include "api/handler_deps.h"
#include "api/query_params.h"
#include "api/task_events.h"
#include "api/task_json.h"
#include "common/ids.h"
#include "common/utf8.h"
#include "identity/token_verifier.h"
#include "usecase/access.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using Request = http::HttpRequest;
using Response = http::HttpResponse;

// ?status=: one state, or several separated by commas (the page's "failed"
// tab asks for FAILED,STALE,INCONSISTENT), or QUEUED / RETRYING: PENDING
// tasks not yet attempted / waiting for an automatic retry.
Status ParseStatusFilter(const std::string& text, store::TaskCatalog::ListQuery* q) {
  if (text == "QUEUED" || text == "RETRYING") {
    q->retrying = text == "RETRYING";
    return Status::Ok();
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string one = text.substr(start, comma - start);
    auto state = task::ParseTaskState(one);
    if (!state) return InvalidArgument("unknown status " + one);
    q->any_status.push_back(*state);
    start = comma + 1;
  }
  return Status::Ok();
}

}  // namespace

std::vector<Route> TaskReadHandlers::Routes() {
  const std::string tasks = "/export-tasks", one = "/export-tasks/{id}";
  return {
      FamilyRoute(this, "GET", tasks, &TaskReadHandlers::ListTasks),
      // Its own credential: a ticket, or the Authorization header.
      FamilyRoute(this, "GET", tasks + "/events", &TaskReadHandlers::TaskEvents,
                  RouteNeeds::kNothing),
      FamilyRoute(this, "POST", tasks + "/events-ticket", &TaskReadHandlers::EventsTicket),
      FamilyRoute(this, "GET", one, &TaskReadHandlers::GetTask),
      FamilyRoute(this, "GET", one + "/timeline", &TaskReadHandlers::Timeline),
  };
}

// ---- GET /export-tasks -------------------------------------------------------

void TaskReadHandlers::ListTasks(const Request& req, const Principal& p, Response& res) {
  auto data = DoList(req, p);
  if (!data.ok()) return WriteStatus(res, data.status());
  WriteSuccess(res, std::move(data).value());
}

StatusOr<json> TaskReadHandlers::DoList(const Request& req, const Principal& p) {
  store::TaskCatalog::ListQuery q;
  q.tenant_id = p.tenant;
  q.app_code = p.app;
  q.requested_by = usecase::ListableRequester(p);
  if (req.HasQuery("status")) EC_RETURN_IF_ERROR(ParseStatusFilter(req.Query("status"), &q));
  if (req.HasQuery("name")) {
    std::string name = req.Query("name");
    if (utf8::CountCodePoints(name) > 100) return InvalidArgument("name filter is too long");
    if (!name.empty()) q.name_contains = std::move(name);
  }
  if (req.HasQuery("exportType")) {
    std::string type = req.Query("exportType");
    if (type.empty() || type.size() > 128) return InvalidArgument("invalid exportType filter");
    q.export_type = type;
  }
  EC_RETURN_IF_ERROR(ReadPageParams(req, &q.page, &q.size));
  EC_ASSIGN_OR_RETURN(q.after, ReadPageCursor(req));
  EC_ASSIGN_OR_RETURN(auto page, deps_.api->store->ListTasks(q));
  json records = json::array();
  for (const auto& t : page.records) records.push_back(TaskToJson(t));
  json data = PageFields(page.total, page.total_is_exact, page.next, q.page, q.size);
  data["records"] = std::move(records);
  return data;
}

// ---- GET /export-tasks/{id} --------------------------------------------------

void TaskReadHandlers::GetTask(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::LoadVisibleTask(*deps_.api->store, p, req.PathParam(0));
  if (!t.ok()) return WriteStatus(res, t.status());
  WriteSuccess(res, TaskToJson(*t));
}

// ---- GET /export-tasks/{id}/timeline ------------------------------------------
// Whoever may read the task may read its timeline: the same LoadVisibleTask.

void TaskReadHandlers::Timeline(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::LoadVisibleTask(*deps_.api->store, p, req.PathParam(0));
  if (!t.ok()) return WriteStatus(res, t.status());
  auto events = deps_.api->store->ListTaskEvents(t->id);
  if (!events.ok()) return WriteStatus(res, events.status());
  json out = json::array();
  const TimelineReader reader{.names_downloaders = p.HasPerm(kAuditReadPermission)};
  for (const store::TaskEvent& e : *events) out.push_back(TaskEventToJson(e, reader));
  WriteSuccess(res, {{"taskId", std::to_string(t->id)},
                     {"status", task::ToString(t->status)},
                     {"events", std::move(out)},
                     {"limit", store::kMaxEventsPerTask}});
}

// ---- GET /export-tasks/events (docs/http-api.md#get-export-tasksevents--task-events)

// A single-use ticket for one connect of the event stream (api/events_ticket.h):
// EventSource cannot send the Authorization header, and a bearer token in the
// URL would be logged by every proxy on the way.
void TaskReadHandlers::EventsTicket(const Request& req, const Principal& p, Response& res) {
  auto ticket = deps_.tickets->Issue(p, NowMs());
  if (!ticket.ok()) {
    if (ticket.status().code() == StatusCode::kLimitExceeded) res.SetHeader("Retry-After", "5");
    return WriteStatus(res, ticket.status());
  }
  res.SetHeader("Cache-Control", "no-store");
  WriteSuccess(res, {{"ticket", *ticket},
                     {"expiresInSeconds", deps_.tickets->ttl().count()},
                     {"eventsPath", ApiPath("/export-tasks/events")}});
}

namespace {

// The stream's caller: the Authorization header, or a ticket in ?ticket=. A
// bearer token in the query (?access_token=, accepted before tickets) is
// refused, so that no client keeps putting one where proxies log it. A ticket
// is redeemed only once `hub` has room for its principal, so a refused
// connect spends no nonce.
StatusOr<Principal> EventsCaller(const Request& req, const identity::TokenVerifier& verifier,
                                 EventsTickets& tickets, TaskEventHub& hub) {
  if (req.HasQuery("access_token")) {
    return Unauthenticated(
        "a bearer token in the URL is refused; POST /export-tasks/events-ticket and connect with "
        "?ticket=");
  }
  std::string authorization = req.Header("Authorization");
  if (authorization.empty() && req.HasQuery("ticket")) {
    return tickets.Redeem(req.Query("ticket"), NowMs(),
                          [&hub](const Principal& p) { return hub.CheckCapacity(p); });
  }
  return verifier.Authenticate(authorization);
}

// A refused connect as a real HTTP status (EventSource stops only on a
// non-200 answer): over a cap 429 (per user) or 503 (the instance), each with
// Retry-After and the cap's own message; a bad credential 401.
void WriteStreamRefusal(Response& res, const Status& status) {
  switch (status.code()) {
    case StatusCode::kLimitExceeded:
      res.SetHeader("Retry-After", "30");
      return WriteHttpError(res, 429, status.message());
    case StatusCode::kUnavailable:
      res.SetHeader("Retry-After", "30");
      return WriteHttpError(res, 503, status.message());
    default:
      return WriteHttpStatus(res, status);
  }
}

}  // namespace

void TaskReadHandlers::TaskEvents(const Request& req, const Principal&, Response& res) {
  if (deps_.verifier == nullptr)
    return WriteHttpStatus(res, Internal("authentication is not configured"));
  auto p = EventsCaller(req, *deps_.verifier, *deps_.tickets, *deps_.events);
  if (!p.ok()) return WriteStreamRefusal(res, p.status());
  std::optional<int64_t> last_event_id;
  std::string last = req.Header("Last-Event-ID");
  if (last.empty()) last = req.Query("lastEventId");
  if (auto id = ParseId(last)) last_event_id = *id;  // anything else: start from now
  Status room = deps_.events->CheckCapacity(*p);
  if (!room.ok()) return WriteStreamRefusal(res, room);
  auto source = deps_.events->Subscribe(*p, last_event_id);
  if (!source.ok()) {
    spdlog::warn("task events: subscribing failed: {}", source.status().ToString());
    res.SetHeader("Retry-After", "30");
    return WriteHttpError(res, 503, "task events are unavailable; the page falls back to polling");
  }
  res.SetHeader("Cache-Control", "no-cache");
  res.SetHeader("X-Accel-Buffering", "no");  // a buffering proxy would hold the events
  res.SetLive(std::move(source).value(), "text/event-stream; charset=utf-8");
}

}  // namespace export_center::api
