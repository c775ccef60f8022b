#include "store/sql_subscription_ledger.h"

#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/thread_annotations.h"
#include "common/utf8.h"
#include "store/id_node.h"

namespace export_center::store {

std::string_view ToString(SubscriptionState state) {
  return state == SubscriptionState::kActive ? "ACTIVE" : "PAUSED";
}

std::string_view ToString(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kClaimed:
      return "CLAIMED";
    case RunOutcome::kCreated:
      return "CREATED";
    case RunOutcome::kDeferred:
      return "DEFERRED";
    case RunOutcome::kSkipped:
      return "SKIPPED";
    case RunOutcome::kFailed:
      return "FAILED";
  }
  return "?";
}

namespace {

constexpr char kSubscriptionColumns[] =
    "id, tenant_id, app_code, owner, export_type, format, task_name, parameters_json, cron,"
    " time_zone, business_days_only, delivery_json, state, pause_reason, pause_detail,"
    " consecutive_failures, next_slot_at, last_slot_at, version, created_at, updated_at,"
    " owner_perms, schedule_json, locale";

constexpr char kRunColumns[] =
    "subscription_id, slot_at, outcome, task_id, instance, lease_until, claims, detail, fired_at,"
    " updated_at";

// A detail is the operators' text of one run (a failure, a pause's reason):
// outside text, so cut on a character boundary and made valid UTF-8 by the
// helper every stored message goes through, never by bytes.
constexpr size_t kMaxDetailBytes = 2000;

std::string Bounded(std::string_view text) { return utf8::Excerpt(text, kMaxDetailBytes); }

RunOutcome OutcomeFromText(const std::string& text) {
  for (RunOutcome o : {RunOutcome::kClaimed, RunOutcome::kCreated, RunOutcome::kDeferred,
                       RunOutcome::kSkipped, RunOutcome::kFailed}) {
    if (text == ToString(o)) return o;
  }
  return RunOutcome::kFailed;
}

Subscription SubscriptionFromRow(const Row& r) {
  Subscription s;
  s.id = r.Int(0);
  s.spec.tenant_id = r.Text(1);
  s.spec.app_code = r.Text(2);
  s.spec.owner = r.Text(3);
  s.spec.export_type = r.Text(4);
  s.spec.format = r.Text(5);
  s.spec.task_name = r.Text(6);
  s.spec.parameters_json = r.Text(7);
  s.spec.cron = r.Text(8);
  s.spec.time_zone = r.Text(9);
  s.spec.business_days_only = r.Int(10) != 0;
  s.spec.delivery_json = r.Text(11);
  s.state = r.Text(12) == "PAUSED" ? SubscriptionState::kPaused : SubscriptionState::kActive;
  s.pause_reason = r.OptText(13);
  s.pause_detail = r.OptText(14);
  s.consecutive_failures = static_cast<int32_t>(r.Int(15));
  s.next_slot_at = r.OptInt(16);
  s.last_slot_at = r.OptInt(17);
  s.version = static_cast<int32_t>(r.Int(18));
  s.created_at = r.Int(19);
  s.updated_at = r.Int(20);
  s.spec.first_slot_at = s.next_slot_at.value_or(0);
  s.spec.owner_perms = r.OptText(21).value_or("[]");
  s.spec.schedule_json = r.OptText(22).value_or("");
  s.spec.locale = r.OptText(23).value_or("");
  return s;
}

SubscriptionRun RunFromRow(const Row& r) {
  SubscriptionRun run;
  run.subscription_id = r.Int(0);
  run.slot_at = r.Int(1);
  run.outcome = OutcomeFromText(r.Text(2));
  run.task_id = r.OptInt(3);
  run.instance = r.Text(4);
  run.lease_until = r.OptInt(5);
  run.claims = static_cast<int32_t>(r.Int(6));
  run.detail = r.OptText(7);
  run.fired_at = r.Int(8);
  run.updated_at = r.Int(9);
  return run;
}

class SqlSubscriptionLedger final : public SubscriptionLedger {
 public:
  explicit SqlSubscriptionLedger(std::shared_ptr<Database> db)
      : db_(std::move(db)), dialect_(db_->dialect()) {}

  StatusOr<Subscription> CreateSubscription(const NewSubscription& spec,
                                            const SubscriptionCaps& caps) override {
    EC_ASSIGN_OR_RETURN(const int64_t id, ids_.Next());
    EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
      // The create guard row serialises creators, so two cannot both pass the caps.
      EC_ASSIGN_OR_RETURN(Rows guard, c.Query(Sql("SELECT name FROM export_task_guard"
                                                  " WHERE name = 'GLOBAL_CREATE'{FOR_UPDATE}")));
      if (guard.empty()) return Internal("guard row GLOBAL_CREATE is missing; run migrate");
      EC_ASSIGN_OR_RETURN(Rows owned, c.Query("SELECT COUNT(*) FROM export_subscription"
                                              " WHERE tenant_id = ? AND owner = ?",
                                              {spec.tenant_id, spec.owner}));
      if (owned.at(0).Int(0) >= caps.per_owner) {
        return LimitExceeded("subscriptions: the owner already has " +
                             std::to_string(caps.per_owner) + ", the most allowed");
      }
      EC_ASSIGN_OR_RETURN(Rows tenant, c.Query("SELECT COUNT(*) FROM export_subscription"
                                               " WHERE tenant_id = ?",
                                               {spec.tenant_id}));
      if (tenant.at(0).Int(0) >= caps.per_tenant) {
        return LimitExceeded("subscriptions: the tenant already has " +
                             std::to_string(caps.per_tenant) + ", the most allowed");
      }
      return c
          .Exec(Sql("INSERT INTO export_subscription (" + std::string(kSubscriptionColumns) +
                    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'ACTIVE', NULL, NULL, 0, ?,"
                    " NULL, 1, {NOW}, {NOW}, ?, ?, ?)"),
                {id, spec.tenant_id, spec.app_code, spec.owner, spec.export_type, spec.format,
                 spec.task_name, spec.parameters_json, spec.cron, spec.time_zone,
                 spec.business_days_only ? 1 : 0, spec.delivery_json, spec.first_slot_at,
                 spec.owner_perms, spec.schedule_json, spec.locale})
          .status();
    }));
    return GetSubscription(id);
  }

  StatusOr<Subscription> GetSubscription(int64_t id) override {
    EC_ASSIGN_OR_RETURN(Rows rows, db_->Query("SELECT " + std::string(kSubscriptionColumns) +
                                                  " FROM export_subscription WHERE id = ?",
                                              {id}));
    if (rows.empty()) return NotFound("subscription " + std::to_string(id) + " does not exist");
    return SubscriptionFromRow(rows[0]);
  }

  StatusOr<std::vector<Subscription>> ListSubscriptions(const std::string& tenant_id,
                                                        const std::optional<std::string>& owner,
                                                        int64_t after_id, int limit) override {
    std::string sql = "SELECT " + std::string(kSubscriptionColumns) +
                      " FROM export_subscription WHERE tenant_id = ?";
    SqlParams params = {tenant_id};
    if (owner) {
      sql += " AND owner = ?";
      params.emplace_back(*owner);
    }
    sql += " AND id > ? ORDER BY id LIMIT ?";
    params.emplace_back(after_id);
    params.emplace_back(limit);
    EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(sql, params));
    std::vector<Subscription> out;
    out.reserve(rows.size());
    for (const Row& r : rows) out.push_back(SubscriptionFromRow(r));
    return out;
  }

  StatusOr<std::vector<Subscription>> FindSubscriptions(const SubscriptionFilter& filter,
                                                        int64_t after_id, int limit) override {
    std::string sql =
        "SELECT " + std::string(kSubscriptionColumns) + " FROM export_subscription WHERE id > ?";
    SqlParams params = {after_id};
    auto narrow = [&](const char* column, const std::optional<std::string>& value) {
      if (!value) return;
      sql += std::string(" AND ") + column + " = ?";
      params.emplace_back(*value);
    };
    narrow("tenant_id", filter.tenant_id);
    narrow("app_code", filter.app_code);
    narrow("owner", filter.owner);
    if (filter.state) narrow("state", std::string(ToString(*filter.state)));
    sql += " ORDER BY id LIMIT ?";
    params.emplace_back(limit);
    EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(sql, params));
    std::vector<Subscription> out;
    out.reserve(rows.size());
    for (const Row& r : rows) out.push_back(SubscriptionFromRow(r));
    return out;
  }

  StatusOr<Subscription> UpdateSubscription(int64_t id, int32_t expected_version,
                                            const NewSubscription& spec) override {
    // One conditional statement: the version is the edit's optimistic lock,
    // and a paused subscription keeps no next slot.
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        db_->Exec(
            Sql("UPDATE export_subscription SET export_type = ?, format = ?, task_name = ?,"
                " parameters_json = ?, cron = ?, time_zone = ?, business_days_only = ?,"
                " delivery_json = ?, owner_perms = ?, schedule_json = ?, locale = ?,"
                " next_slot_at = CASE WHEN state = 'ACTIVE' THEN ? ELSE NULL END,"
                " version = version + 1, updated_at = {NOW}"
                " WHERE id = ? AND version = ?"),
            {spec.export_type, spec.format, spec.task_name, spec.parameters_json, spec.cron,
             spec.time_zone, spec.business_days_only ? 1 : 0, spec.delivery_json, spec.owner_perms,
             spec.schedule_json, spec.locale, spec.first_slot_at, id, expected_version}));
    EC_ASSIGN_OR_RETURN(Subscription now, GetSubscription(id));
    if (n != 1) {
      return Conflict("subscription " + std::to_string(id) + " is at version " +
                      std::to_string(now.version) + ", not " + std::to_string(expected_version) +
                      "; read it again and repeat the edit");
    }
    return now;
  }

  StatusOr<int64_t> RefreshOwnerPerms(const std::string& tenant_id, const std::string& owner,
                                      const std::string& perms_json) override {
    return db_->Exec(
        "UPDATE export_subscription SET owner_perms = ? WHERE tenant_id = ? AND owner = ?"
        " AND (owner_perms IS NULL OR owner_perms <> ?)",
        {perms_json, tenant_id, owner, perms_json});
  }

  StatusOr<std::optional<int64_t>> FindSlotTask(const Subscription& s,
                                                const std::string& params_hash,
                                                int64_t since_ms) override {
    // Only tasks requested before the subscription's next run was fired: a
    // run taken over late must not adopt the next slot's task (same owner,
    // type, name and — without relative dates — parameters). A run's task
    // is created after its claim, so the next run's claim bounds this one's.
    EC_ASSIGN_OR_RETURN(Rows next, db_->Query("SELECT MIN(fired_at) FROM export_subscription_run"
                                              " WHERE subscription_id = ? AND slot_at > ?",
                                              {s.id, since_ms}));
    const int64_t until_ms =
        next.empty() || next[0].IsNull(0) ? std::numeric_limits<int64_t>::max() : next[0].Int(0);
    // The owner's type index (tenant, app, requester, type, requested_at)
    // bounds the scan to the owner's tasks of the type since the slot.
    EC_ASSIGN_OR_RETURN(
        Rows rows, db_->Query("SELECT id FROM export_task WHERE tenant_id = ? AND app_code = ?"
                              " AND requested_by = ? AND export_type = ? AND requested_at >= ?"
                              " AND requested_at < ? AND params_hash = ? AND task_name = ?"
                              " ORDER BY requested_at, id LIMIT 1",
                              {s.spec.tenant_id, s.spec.app_code, s.spec.owner, s.spec.export_type,
                               since_ms, until_ms, params_hash, s.spec.task_name}));
    if (rows.empty()) return std::optional<int64_t>();
    return std::optional<int64_t>(rows[0].Int(0));
  }

  Status DeleteSubscription(int64_t id) override {
    return Write([&](Connection& c) -> Status {
      EC_RETURN_IF_ERROR(
          c.Exec("DELETE FROM export_subscription_run WHERE subscription_id = ?", {id}).status());
      EC_ASSIGN_OR_RETURN(int64_t n, c.Exec("DELETE FROM export_subscription WHERE id = ?", {id}));
      if (n == 0) return NotFound("subscription " + std::to_string(id) + " does not exist");
      return Status::Ok();
    });
  }

  Status PauseSubscription(int64_t id, std::string_view reason, std::string_view detail) override {
    return ChangeState(id, "PAUSED",
                       "state = 'PAUSED', pause_reason = ?, pause_detail = ?, next_slot_at = NULL",
                       {std::string(reason), Bounded(detail)}, "ACTIVE");
  }

  Status ResumeSubscription(int64_t id, int64_t next_slot_at) override {
    return ChangeState(id, "ACTIVE",
                       "state = 'ACTIVE', pause_reason = NULL, pause_detail = NULL,"
                       " next_slot_at = ?, consecutive_failures = 0",
                       {next_slot_at}, "PAUSED");
  }

  StatusOr<std::vector<int64_t>> SelectDueSubscriptions(int limit) override {
    EC_ASSIGN_OR_RETURN(Rows rows,
                        db_->Query(Sql("SELECT id FROM export_subscription"
                                       " WHERE state = 'ACTIVE' AND next_slot_at <= {NOW}"
                                       " ORDER BY next_slot_at, id LIMIT ?"),
                                   {limit}));
    std::vector<int64_t> ids;
    for (const Row& r : rows) ids.push_back(r.Int(0));
    return ids;
  }

  StatusOr<std::optional<SubscriptionRun>> ClaimSlot(int64_t id, int64_t slot_at,
                                                     std::optional<int64_t> next_slot_at,
                                                     const std::string& instance, int64_t lease_ms,
                                                     RunOutcome outcome,
                                                     std::string_view detail) override {
    std::optional<SubscriptionRun> claimed;
    EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
      claimed.reset();
      // The one statement that decides who fires the slot: last_slot_at only
      // moves forward, under the row's write lock.
      EC_ASSIGN_OR_RETURN(
          int64_t moved,
          c.Exec(Sql("UPDATE export_subscription SET last_slot_at = ?, next_slot_at = ?,"
                     " version = version + 1, updated_at = {NOW}"
                     " WHERE id = ? AND state = 'ACTIVE'"
                     " AND (last_slot_at IS NULL OR last_slot_at < ?)"),
                 {slot_at, next_slot_at, id, slot_at}));
      if (moved != 1) return Status::Ok();
      const bool running = outcome == RunOutcome::kClaimed;
      EC_RETURN_IF_ERROR(
          c.Exec(Sql("INSERT INTO export_subscription_run (" + std::string(kRunColumns) +
                     ") VALUES (?, ?, ?, NULL, ?, " + std::string(running ? "{NOW} + ?" : "?") +
                     ", 1, ?, {NOW}, {NOW})"),
                 {id, slot_at, std::string(ToString(outcome)), instance,
                  running ? SqlValue(lease_ms) : SqlValue(),
                  detail.empty() ? SqlValue() : SqlValue(Bounded(detail))})
              .status());
      EC_ASSIGN_OR_RETURN(claimed, ReadRun(c, id, slot_at));
      return Status::Ok();
    }));
    return claimed;
  }

  StatusOr<FinishResult> FinishRun(int64_t id, int64_t slot_at, const std::string& instance,
                                   RunOutcome outcome, std::optional<int64_t> task_id,
                                   std::string_view detail) override {
    FinishResult result;
    EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
      result = FinishResult{};
      EC_ASSIGN_OR_RETURN(
          int64_t n,
          c.Exec(Sql("UPDATE export_subscription_run SET outcome = ?, task_id = ?, detail = ?,"
                     " lease_until = NULL, updated_at = {NOW}"
                     " WHERE subscription_id = ? AND slot_at = ? AND outcome = 'CLAIMED'"
                     " AND instance = ?"),
                 {std::string(ToString(outcome)), task_id,
                  detail.empty() ? SqlValue() : SqlValue(Bounded(detail)), id, slot_at, instance}));
      if (n != 1) {
        result.mark = MarkOutcome::kClaimLost;
        return Status::Ok();
      }
      if (outcome == RunOutcome::kFailed) {
        EC_RETURN_IF_ERROR(c.Exec(Sql("UPDATE export_subscription SET consecutive_failures ="
                                      " consecutive_failures + 1, updated_at = {NOW} WHERE id = ?"),
                                  {id})
                               .status());
      } else if (outcome == RunOutcome::kCreated) {
        EC_RETURN_IF_ERROR(c.Exec("UPDATE export_subscription SET consecutive_failures = 0"
                                  " WHERE id = ? AND consecutive_failures <> 0",
                                  {id})
                               .status());
      }
      EC_ASSIGN_OR_RETURN(Rows rows, c.Query("SELECT consecutive_failures FROM"
                                             " export_subscription WHERE id = ?",
                                             {id}));
      if (!rows.empty()) result.consecutive_failures = static_cast<int32_t>(rows[0].Int(0));
      return Status::Ok();
    }));
    return result;
  }

  StatusOr<MarkOutcome> DeferRun(int64_t id, int64_t slot_at, const std::string& instance,
                                 int64_t retry_after_ms, std::string_view detail) override {
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        db_->Exec(Sql("UPDATE export_subscription_run SET lease_until = {NOW} + ?, detail = ?,"
                      " updated_at = {NOW}"
                      " WHERE subscription_id = ? AND slot_at = ? AND outcome = 'CLAIMED'"
                      " AND instance = ?"),
                  {retry_after_ms, detail.empty() ? SqlValue() : SqlValue(Bounded(detail)), id,
                   slot_at, instance}));
    return n == 1 ? MarkOutcome::kMarked : MarkOutcome::kClaimLost;
  }

  StatusOr<int64_t> DatabaseNowMs() override {
    EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(Sql("SELECT {NOW}")));
    return rows.at(0).Int(0);
  }

  StatusOr<std::vector<SubscriptionRun>> SelectExpiredRuns(int limit) override {
    EC_ASSIGN_OR_RETURN(Rows rows,
                        db_->Query(Sql("SELECT " + std::string(kRunColumns) +
                                       " FROM export_subscription_run"
                                       " WHERE outcome = 'CLAIMED' AND lease_until < {NOW}"
                                       " ORDER BY lease_until LIMIT ?"),
                                   {limit}));
    std::vector<SubscriptionRun> runs;
    for (const Row& r : rows) runs.push_back(RunFromRow(r));
    return runs;
  }

  StatusOr<std::optional<SubscriptionRun>> ReclaimExpiredRun(int64_t id, int64_t slot_at,
                                                             const std::string& instance,
                                                             int64_t lease_ms) override {
    std::optional<SubscriptionRun> taken;
    EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
      taken.reset();
      EC_ASSIGN_OR_RETURN(
          int64_t n,
          c.Exec(Sql("UPDATE export_subscription_run SET instance = ?, lease_until = {NOW} + ?,"
                     " claims = claims + 1, updated_at = {NOW}"
                     " WHERE subscription_id = ? AND slot_at = ? AND outcome = 'CLAIMED'"
                     " AND lease_until < {NOW}"),
                 {instance, lease_ms, id, slot_at}));
      if (n != 1) return Status::Ok();
      EC_ASSIGN_OR_RETURN(taken, ReadRun(c, id, slot_at));
      return Status::Ok();
    }));
    return taken;
  }

  StatusOr<std::vector<SubscriptionRun>> ListRuns(int64_t id, int limit) override {
    EC_ASSIGN_OR_RETURN(Rows rows, db_->Query("SELECT " + std::string(kRunColumns) +
                                                  " FROM export_subscription_run"
                                                  " WHERE subscription_id = ?"
                                                  " ORDER BY slot_at DESC LIMIT ?",
                                              {id, limit}));
    std::vector<SubscriptionRun> runs;
    for (const Row& r : rows) runs.push_back(RunFromRow(r));
    return runs;
  }

  StatusOr<int64_t> PruneRuns(int64_t before_ms, int limit) override {
    // The portable DELETE … LIMIT (dialect.h): MySQL takes no LIMIT in an IN
    // subquery, but does through a derived table.
    return db_->Exec(
        "DELETE FROM export_subscription_run WHERE (subscription_id, slot_at) IN"
        " (SELECT subscription_id, slot_at FROM (SELECT subscription_id, slot_at"
        " FROM export_subscription_run WHERE fired_at < ? AND outcome <> 'CLAIMED'"
        " ORDER BY fired_at LIMIT ?) picked)",
        {before_ms, limit});
  }

 private:
  std::string Sql(std::string_view text) const { return dialect_.Expand(text); }

  Status Write(const std::function<Status(Connection&)>& fn) {
    return db_->WithTransaction(TxMode::kWrite, fn);
  }

  StatusOr<std::optional<SubscriptionRun>> ReadRun(Connection& c, int64_t id, int64_t slot_at) {
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query("SELECT " + std::string(kRunColumns) +
                                               " FROM export_subscription_run"
                                               " WHERE subscription_id = ? AND slot_at = ?",
                                           {id, slot_at}));
    if (rows.empty()) return std::optional<SubscriptionRun>();
    return std::optional<SubscriptionRun>(RunFromRow(rows[0]));
  }

  // `from` → `to` with `set`; NotFound or Conflict naming the state when the
  // subscription is not in `from`.
  Status ChangeState(int64_t id, std::string_view to, const std::string& set, SqlParams params,
                     std::string_view from) {
    params.emplace_back(id);
    params.emplace_back(std::string(from));
    EC_ASSIGN_OR_RETURN(int64_t n, db_->Exec(Sql("UPDATE export_subscription SET " + set +
                                                 ", version = version + 1, updated_at = {NOW}"
                                                 " WHERE id = ? AND state = ?"),
                                             params));
    if (n == 1) return Status::Ok();
    EC_ASSIGN_OR_RETURN(Subscription now, GetSubscription(id));
    return Conflict("subscription " + std::to_string(id) + " is " +
                    std::string(ToString(now.state)) + ", not " + std::string(from) +
                    " (cannot become " + std::string(to) + ")");
  }

  std::shared_ptr<Database> db_;
  const Dialect dialect_;
  LazyIds ids_{db_.get()};
};

}  // namespace

std::unique_ptr<SubscriptionLedger> NewSqlSubscriptionLedger(std::shared_ptr<Database> db) {
  return std::make_unique<SqlSubscriptionLedger>(std::move(db));
}

}  // namespace export_center::store
