#include "store/leased_queue.h"

#include <utility>

namespace export_center::store {

std::string_view ToString(MarkOutcome outcome) {
  switch (outcome) {
    case MarkOutcome::kMarked:
      return "marked";
    case MarkOutcome::kClaimLost:
      return "claim lost";
  }
  return "claim lost";
}

LeasedQueue::LeasedQueue(std::shared_ptr<Database> db, LeasedQueueTable table)
    : db_(std::move(db)), d_(db_->dialect()), table_(table) {}

StatusOr<std::vector<int64_t>> LeasedQueue::SelectDue(int limit) const {
  const std::string select = table_.select_due.empty()
                                 ? "SELECT id FROM " + std::string(table_.table) + " WHERE " +
                                       std::string(table_.claimable) +
                                       " ORDER BY next_retry_at, id LIMIT ?"
                                 : std::string(table_.select_due);
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(Sql(select), {limit}));
  std::vector<int64_t> ids;
  ids.reserve(rows.size());
  for (const Row& r : rows) ids.push_back(r.Int(0));
  return ids;
}

StatusOr<std::optional<Row>> LeasedQueue::Claim(int64_t id, const std::string& instance,
                                                int lease_seconds) const {
  const std::string table(table_.table);
  const std::string claim =
      Sql("UPDATE " + table + " SET status = '" + std::string(table_.claimed) +
          "', lease_owner = ?, lease_until = {NOW} + ?,"
          " attempt_count = attempt_count + 1, updated_at = {NOW} WHERE id = ? AND " +
          std::string(table_.claimable));
  const std::string read =
      "SELECT " + std::string(table_.columns) + " FROM " + table + " WHERE id = ?";
  std::optional<Row> result;
  EC_RETURN_IF_ERROR(db_->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
    result.reset();
    EC_ASSIGN_OR_RETURN(int64_t n, c.Exec(claim, {instance, int64_t{lease_seconds} * 1000, id}));
    if (n == 0) return Status::Ok();  // another instance won, or no longer claimable
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(read, {id}));
    if (rows.empty()) return Internal("claimed " + table + " row vanished");
    result = std::move(rows[0]);
    return Status::Ok();
  }));
  return result;
}

StatusOr<MarkOutcome> LeasedQueue::Mark(int64_t id, const std::string& instance,
                                        std::string_view set, SqlParams params,
                                        const std::function<Status(Connection&)>& on_marked) const {
  params.emplace_back(id);
  params.emplace_back(instance);
  const std::string update =
      Sql("UPDATE " + std::string(table_.table) + " SET " + std::string(set) +
          ", lease_owner = NULL, lease_until = NULL, updated_at = {NOW}"
          " WHERE id = ? AND status = '" +
          std::string(table_.claimed) + "' AND lease_owner = ?");
  if (!on_marked) {
    EC_ASSIGN_OR_RETURN(int64_t n, db_->Exec(update, params));
    return n == 1 ? MarkOutcome::kMarked : MarkOutcome::kClaimLost;
  }
  int64_t n = 0;
  EC_RETURN_IF_ERROR(db_->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(n, c.Exec(update, params));
    return n == 1 ? on_marked(c) : Status::Ok();
  }));
  return n == 1 ? MarkOutcome::kMarked : MarkOutcome::kClaimLost;
}

StatusOr<Rows> LeasedQueue::List(std::string_view where, std::string_view order_by,
                                 SqlParams params) const {
  return db_->Query(
      Sql("SELECT " + std::string(table_.columns) + " FROM " + std::string(table_.table) +
          " WHERE " + std::string(where) + " ORDER BY " + std::string(order_by)),
      params);
}

}  // namespace export_center::store
