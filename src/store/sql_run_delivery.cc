#include "store/sql_run_delivery.h"

#include <string>
#include <utility>
#include <vector>

#include "common/utf8.h"

namespace export_center::store {

std::string_view ToString(RunDelivery delivery) {
  switch (delivery) {
    case RunDelivery::kMailed:
      return "MAILED";
    case RunDelivery::kSkippedEmpty:
      return "SKIPPED_EMPTY";
    case RunDelivery::kNoticeSent:
      return "NOTICE_SENT";
    case RunDelivery::kNoticeSuppressed:
      return "NOTICE_SUPPRESSED";
    case RunDelivery::kNotMailed:
      return "NOT_MAILED";
  }
  return "NOT_MAILED";
}

namespace {

constexpr size_t kMaxDetailBytes = 2000;

std::optional<RunDelivery> DeliveryFromText(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  for (RunDelivery d : {RunDelivery::kMailed, RunDelivery::kSkippedEmpty, RunDelivery::kNoticeSent,
                        RunDelivery::kNoticeSuppressed, RunDelivery::kNotMailed}) {
    if (*text == ToString(d)) return d;
  }
  return RunDelivery::kNotMailed;
}

class SqlRunDeliveryLedger final : public RunDeliveryLedger {
 public:
  explicit SqlRunDeliveryLedger(std::shared_ptr<Database> db)
      : db_(std::move(db)), dialect_(db_->dialect()) {}

  StatusOr<std::vector<DeliverableRun>> SelectDeliverableRuns(int limit) override {
    // A CREATED run waits for its task to end; a FAILED run has nothing to
    // wait for. The index (delivery, outcome, fired_at) finds the undecided.
    EC_ASSIGN_OR_RETURN(
        Rows rows,
        db_->Query(
            "SELECT r.subscription_id, r.slot_at, r.outcome, r.task_id, r.detail, s.tenant_id,"
            " s.owner, s.export_type, s.task_name, s.time_zone, s.delivery_json, r.fired_at,"
            " s.locale"
            " FROM export_subscription_run r"
            " JOIN export_subscription s ON s.id = r.subscription_id"
            " LEFT JOIN export_task t ON t.id = r.task_id"
            " WHERE r.delivery IS NULL AND ((r.outcome = 'CREATED'"
            " AND t.status NOT IN ('PENDING', 'RUNNING')) OR r.outcome = 'FAILED')"
            " ORDER BY r.fired_at, r.subscription_id, r.slot_at LIMIT ?",
            {limit}));
    std::vector<DeliverableRun> runs;
    runs.reserve(rows.size());
    for (const Row& r : rows) {
      DeliverableRun run;
      run.subscription_id = r.Int(0);
      run.slot_at = r.Int(1);
      run.outcome = r.Text(2) == "CREATED" ? RunOutcome::kCreated : RunOutcome::kFailed;
      run.task_id = r.OptInt(3);
      run.detail = r.OptText(4);
      run.tenant_id = r.Text(5);
      run.owner = r.Text(6);
      run.export_type = r.Text(7);
      run.task_name = r.Text(8);
      run.time_zone = r.Text(9);
      run.delivery_json = r.Text(10);
      run.fired_at = r.Int(11);
      run.locale = r.OptText(12).value_or("");
      runs.push_back(std::move(run));
    }
    return runs;
  }

  StatusOr<MarkOutcome> MarkRunDelivery(int64_t subscription_id, int64_t slot_at,
                                        RunDelivery delivery, std::string_view detail) override {
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        db_->Exec(Sql("UPDATE export_subscription_run SET delivery = ?, delivery_detail = ?,"
                      " updated_at = {NOW}"
                      " WHERE subscription_id = ? AND slot_at = ? AND delivery IS NULL"),
                  {std::string(ToString(delivery)),
                   detail.empty() ? SqlValue() : SqlValue(utf8::Excerpt(detail, kMaxDetailBytes)),
                   subscription_id, slot_at}));
    return n == 1 ? MarkOutcome::kMarked : MarkOutcome::kClaimLost;
  }

  StatusOr<Recorded> GetRunDelivery(int64_t subscription_id, int64_t slot_at) override {
    EC_ASSIGN_OR_RETURN(Rows rows, db_->Query("SELECT delivery, delivery_detail"
                                              " FROM export_subscription_run"
                                              " WHERE subscription_id = ? AND slot_at = ?",
                                              {subscription_id, slot_at}));
    if (rows.empty()) {
      return NotFound("subscription " + std::to_string(subscription_id) + " has no run at " +
                      std::to_string(slot_at));
    }
    Recorded out;
    out.delivery = DeliveryFromText(rows[0].OptText(0));
    out.detail = rows[0].OptText(1);
    return out;
  }

  StatusOr<bool> ClaimFailureNotice(int64_t subscription_id, int64_t slot_at,
                                    int64_t grace_ms) override {
    // One conditional statement on the database clock: of two instances
    // deciding two failures at once, one sets it and the other sees it set.
    EC_ASSIGN_OR_RETURN(
        int64_t n, db_->Exec(Sql("UPDATE export_subscription SET failure_notice_at = {NOW},"
                                 " failure_notice_slot = ?"
                                 " WHERE id = ? AND (failure_notice_at IS NULL"
                                 " OR failure_notice_at <= {NOW} - ? OR failure_notice_slot = ?)"),
                             {slot_at, subscription_id, grace_ms, slot_at}));
    return n == 1;
  }

  StatusOr<DeliverySettings> GetDeliverySettings(int64_t subscription_id) override {
    EC_ASSIGN_OR_RETURN(Rows rows,
                        db_->Query("SELECT delivery_json, version FROM export_subscription"
                                   " WHERE id = ?",
                                   {subscription_id}));
    if (rows.empty()) {
      return NotFound("subscription " + std::to_string(subscription_id) + " does not exist");
    }
    return DeliverySettings{rows[0].Text(0), static_cast<int32_t>(rows[0].Int(1))};
  }

  Status SetDeliveryJson(int64_t subscription_id, int32_t version,
                         const std::string& delivery_json) override {
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        db_->Exec(Sql("UPDATE export_subscription SET delivery_json = ?, version = version + 1,"
                      " updated_at = {NOW} WHERE id = ? AND version = ?"),
                  {delivery_json, subscription_id, version}));
    if (n == 1) return Status::Ok();
    EC_RETURN_IF_ERROR(GetDeliverySettings(subscription_id).status());
    return Conflict("subscription " + std::to_string(subscription_id) +
                    " changed meanwhile (it is past version " + std::to_string(version) + ")");
  }

 private:
  std::string Sql(std::string_view text) const { return dialect_.Expand(text); }

  std::shared_ptr<Database> db_;
  const Dialect dialect_;
};

}  // namespace

std::unique_ptr<RunDeliveryLedger> NewSqlRunDeliveryLedger(std::shared_ptr<Database> db) {
  return std::make_unique<SqlRunDeliveryLedger>(std::move(db));
}

}  // namespace export_center::store
