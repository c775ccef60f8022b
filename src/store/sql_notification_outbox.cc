#include "store/sql_notification_outbox.h"

#include <string>
#include <utility>

#include "common/ids.h"
#include "common/utf8.h"
#include "store/leased_queue.h"
#include "store/sql_notification_rows.h"

namespace export_center::store {
namespace {

// A row is due (and claimable) when PENDING and its back-off has passed, or
// CLAIMED by an instance whose lease ran out (it died or hung mid-delivery).
// The queue selects by the same condition (oldest due first), so a claim
// never takes a row the select would not have offered.
constexpr char kDue[] =
    "((status = 'PENDING' AND next_retry_at <= {NOW})"
    " OR (status = 'CLAIMED' AND lease_until <= {NOW}))";

constexpr size_t kMaxErrorBytes = 1000;

// The queue keeps a view of its columns: they live as long as the process.
std::string_view QueueColumns() {
  static const std::string columns = NotificationColumns("");
  return columns;
}

std::optional<NotificationStatus> ParseStatus(const std::string& text) {
  for (auto s : {NotificationStatus::kPending, NotificationStatus::kClaimed,
                 NotificationStatus::kDelivered, NotificationStatus::kDead}) {
    if (ToString(s) == text) return s;
  }
  return std::nullopt;
}

class SqlNotificationOutbox final : public NotificationOutbox {
 public:
  explicit SqlNotificationOutbox(std::shared_ptr<Database> db)
      : db_(db), d_(db->dialect()), queue_(db, {"export_notification", QueueColumns(), kDue, ""}) {}

  StatusOr<std::vector<int64_t>> SelectDueNotifications(int limit) override {
    return queue_.SelectDue(limit);
  }

  StatusOr<std::optional<NotificationEntry>> ClaimNotification(int64_t id,
                                                               const std::string& instance,
                                                               int lease_seconds) override {
    return queue_.ClaimAs(&NotificationFromRow, id, instance, lease_seconds);
  }

  StatusOr<MarkOutcome> MarkNotificationDelivered(int64_t id,
                                                  const std::string& instance) override {
    return queue_.Mark(id, instance,
                       "status = 'DELIVERED', delivered_at = {NOW}, last_error = NULL", {});
  }

  StatusOr<MarkOutcome> MarkNotificationRetry(int64_t id, const std::string& instance,
                                              const std::string& error,
                                              int64_t backoff_ms) override {
    return queue_.Mark(id, instance,
                       "status = 'PENDING', next_retry_at = {NOW} + ?, last_error = ?",
                       {backoff_ms, Cut(error)});
  }

  StatusOr<MarkOutcome> MarkNotificationDead(int64_t id, const std::string& instance,
                                             const std::string& error) override {
    return queue_.Mark(id, instance, "status = 'DEAD', last_error = ?", {Cut(error)});
  }

  StatusOr<std::vector<NotificationEntry>> ListNotificationsForTask(int64_t task_id) override {
    return queue_.ListAs(&NotificationFromRow, "task_id = ?", "created_at, id", {task_id});
  }

  StatusOr<int> PurgeDeliveredNotifications(int older_than_seconds, int limit) override {
    // DEAD rows stay: they are what an operator reads to replay by hand.
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        db_->Exec(Sql("DELETE FROM export_notification WHERE status = 'DELIVERED' AND id IN ("
                      "SELECT id FROM (SELECT id FROM export_notification"
                      " WHERE status = 'DELIVERED' AND delivered_at <= {NOW} - ?"
                      " ORDER BY id LIMIT ?) picked)"),
                  {int64_t{older_than_seconds} * 1000, limit}));
    return static_cast<int>(n);
  }

 private:
  std::string Sql(std::string_view text) const { return d_.Expand(text); }
  static std::string Cut(const std::string& text) {
    return std::string(utf8::TruncateBytes(text, kMaxErrorBytes));
  }

  std::shared_ptr<Database> db_;
  const Dialect d_;
  const LeasedQueue queue_;
};

}  // namespace

std::unique_ptr<NotificationOutbox> NewSqlNotificationOutbox(std::shared_ptr<Database> db) {
  return std::make_unique<SqlNotificationOutbox>(std::move(db));
}

StatusOr<int> InsertTaskEndedNotifications(Connection& c, const Dialect& d, const task::Task& t,
                                           const std::vector<NotificationRoute>& routes,
                                           const std::function<int64_t()>& new_id) {
  const std::string event_id = NewUuid();
  // updated_at was just written with {NOW} by the state change itself.
  const std::string payload = EncodeTaskEndedEvent(t, event_id, t.updated_at);
  int inserted = 0;
  for (const NotificationRoute& route : routes) {
    if (!RouteMatches(route, t)) continue;
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        c.Exec(d.Expand("{INSERT_IGNORE} export_notification (id, event_id, receiver_id, task_id,"
                        " dispatch_version, task_status, payload_json, status, attempt_count,"
                        " next_retry_at, created_at, updated_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, 'PENDING', 0, {NOW}, {NOW}, {NOW})"
                        "{ON_CONFLICT_IGNORE}"),
               {new_id(), event_id, route.receiver_id, t.id, t.dispatch_version,
                task::ToString(t.status), payload}));
    inserted += static_cast<int>(n);
  }
  return inserted;
}

StatusOr<int64_t> RequeueDeadNotification(Connection& c, const Dialect& d, int64_t id) {
  return c.Exec(d.Expand("UPDATE export_notification SET status = 'PENDING',"
                         " attempt_count = 0, next_retry_at = {NOW},"
                         " lease_owner = NULL, lease_until = NULL, updated_at = {NOW}"
                         " WHERE id = ? AND status = 'DEAD'"),
                {id});
}

std::string NotificationColumns(std::string_view prefix) {
  std::string out;
  for (const char* name :
       {"id", "event_id", "receiver_id", "task_id", "dispatch_version", "task_status",
        "payload_json", "status", "attempt_count", "next_retry_at", "lease_owner", "lease_until",
        "delivered_at", "last_error", "created_at"}) {
    if (!out.empty()) out += ", ";
    out.append(prefix).append(name);
  }
  return out;
}

StatusOr<NotificationEntry> NotificationFromRow(const Row& r) {
  NotificationEntry e;
  e.id = r.Int(0);
  e.event_id = r.Text(1);
  e.receiver_id = r.Text(2);
  e.task_id = r.Int(3);
  e.dispatch_version = static_cast<int32_t>(r.Int(4));
  e.task_status = r.Text(5);
  e.payload_json = r.Text(6);
  auto status = ParseStatus(r.Text(7));
  if (!status) {
    return Internal("export_notification " + std::to_string(e.id) + " has an unknown status");
  }
  e.status = *status;
  e.attempt_count = static_cast<int32_t>(r.Int(8));
  e.next_retry_at = r.Int(9);
  e.lease_owner = r.OptText(10);
  e.lease_until = r.OptInt(11);
  e.delivered_at = r.OptInt(12);
  e.last_error = r.OptText(13);
  e.created_at = r.Int(14);
  return e;
}

}  // namespace export_center::store
