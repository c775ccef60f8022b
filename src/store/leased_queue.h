#pragma once
// LeasedQueue: the claim/mark SQL shared by every table of rows that one
// instance at a time takes with a lease — the command outbox (export_outbox)
// and the notification outbox (export_notification), docs/store.md#leased-queues.
//
// A deliverer selects the ids due now, then claims each with one conditional
// UPDATE (CLAIMED by `instance` until now + lease, attempt_count+1) and reads
// the row back in the same transaction, so two instances never hold one row;
// a finished delivery marks the row with an UPDATE that applies only while
// the row is still CLAIMED by that instance. The table says what "due" and
// "claimable" mean; every comparison with now is the database's.
//
// RunClaimRound is the deliverer's side: one round of select, claim, hand
// each claimed entry to a handler — the round of both publishers.
//
// Thread-safety: every method may be called from any thread; each is one
// statement or transaction, safe to retry after Unavailable.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "store/database.h"

namespace export_center::store {

// What a mark (the UPDATE that ends a claim) found.
enum class MarkOutcome {
  kMarked,     // the row was still CLAIMED by the instance and changed
  kClaimLost,  // nothing changed: the lease ran out and the row moved on
};
std::string_view ToString(MarkOutcome outcome);

// The SQL that differs between leased tables; dialect tokens ({NOW}, …) allowed.
struct LeasedQueueTable {
  std::string_view table;      // e.g. export_outbox
  std::string_view columns;    // read back after a claim, in the entry's order
  std::string_view claimable;  // the condition a row must meet to be claimed now
  // SELECT of the ids due now, in delivery order, `?` the limit; empty: the
  // claimable rows, oldest next_retry_at first.
  std::string_view select_due;
  // The status of a claimed row (the mail outbox says SENDING).
  std::string_view claimed = "CLAIMED";
};

class LeasedQueue {
 public:
  // `table`'s strings must outlive the queue (they are constants).
  LeasedQueue(std::shared_ptr<Database> db, LeasedQueueTable table);

  // Ids of up to `limit` rows due now, in the table's delivery order.
  StatusOr<std::vector<int64_t>> SelectDue(int limit) const;
  // Conditional claim of one row: its columns as read after the claim, or
  // nullopt when another instance won or the row is no longer claimable.
  StatusOr<std::optional<Row>> Claim(int64_t id, const std::string& instance,
                                     int lease_seconds) const;
  // Ends a claim: `set` (with its `params`) and a cleared lease, applied only
  // while the row is CLAIMED by `instance`. With `on_marked`, the update and
  // `on_marked` (called only when the row changed) share one transaction.
  StatusOr<MarkOutcome> Mark(int64_t id, const std::string& instance, std::string_view set,
                             SqlParams params,
                             const std::function<Status(Connection&)>& on_marked = nullptr) const;
  // Rows of `where` (with `params`), ordered by `order_by`, as `columns`.
  StatusOr<Rows> List(std::string_view where, std::string_view order_by, SqlParams params) const;

  // The same two, each row mapped to an entry by `from_row`.
  template <class Entry>
  StatusOr<std::optional<Entry>> ClaimAs(StatusOr<Entry> (*from_row)(const Row&), int64_t id,
                                         const std::string& instance, int lease_seconds) const {
    EC_ASSIGN_OR_RETURN(std::optional<Row> row, Claim(id, instance, lease_seconds));
    if (!row) return std::optional<Entry>();
    EC_ASSIGN_OR_RETURN(Entry e, from_row(*row));
    return std::optional<Entry>(std::move(e));
  }
  template <class Entry>
  StatusOr<std::vector<Entry>> ListAs(StatusOr<Entry> (*from_row)(const Row&),
                                      std::string_view where, std::string_view order_by,
                                      SqlParams params) const {
    EC_ASSIGN_OR_RETURN(Rows rows, List(where, order_by, std::move(params)));
    std::vector<Entry> out;
    out.reserve(rows.size());
    for (const Row& r : rows) {
      EC_ASSIGN_OR_RETURN(Entry e, from_row(r));
      out.push_back(std::move(e));
    }
    return out;
  }

 private:
  std::string Sql(std::string_view text) const { return d_.Expand(text); }

  std::shared_ptr<Database> db_;
  const Dialect d_;
  const LeasedQueueTable table_;
};

// One round of a deliverer over a leased queue: select up to `batch_size`
// due ids, claim each (skipping those another instance won), hand each
// claimed entry to `handle`. The round stops before the next claim when
// `stopping()` is true, or when `failures_that_end_a_round` (> 0) handlings
// in a row failed — a channel that looks down costs a whole timeout per try;
// rows not tried keep their state and are due in the next round.
template <class Entry>
struct ClaimRound {
  int batch_size = 100;
  int failures_that_end_a_round = 0;  // 0: never
  std::function<StatusOr<std::vector<int64_t>>(int limit)> select_due;
  std::function<StatusOr<std::optional<Entry>>(int64_t id)> claim;
  std::function<bool(const Entry& entry)> handle;  // false: the handling failed
  std::function<bool()> stopping = [] { return false; };
  // Called for a claim that returned an error; the round goes on.
  std::function<void(int64_t id, const Status& error)> on_claim_error = [](int64_t, const Status&) {
  };
};

struct ClaimRoundResult {
  int claimed = 0;
  // Set when the round ended after failures_that_end_a_round failures: the
  // failures in a row and the due ids not claimed.
  std::optional<int> gave_up_after;
  size_t left_untried = 0;
};

// The error of the select, else what the round did.
template <class Entry>
StatusOr<ClaimRoundResult> RunClaimRound(const ClaimRound<Entry>& round) {
  EC_ASSIGN_OR_RETURN(std::vector<int64_t> due, round.select_due(round.batch_size));
  ClaimRoundResult result;
  int failed_in_a_row = 0;
  for (size_t tried = 0; tried < due.size(); ++tried) {
    if (round.stopping()) break;
    if (round.failures_that_end_a_round > 0 && failed_in_a_row == round.failures_that_end_a_round) {
      result.gave_up_after = failed_in_a_row;
      result.left_untried = due.size() - tried;
      break;
    }
    const int64_t id = due[tried];
    StatusOr<std::optional<Entry>> entry = round.claim(id);
    if (!entry.ok()) {
      round.on_claim_error(id, entry.status());
      continue;
    }
    if (!entry->has_value()) continue;  // another instance claimed it first
    ++result.claimed;
    failed_in_a_row = round.handle(**entry) ? 0 : failed_in_a_row + 1;
  }
  return result;
}

}  // namespace export_center::store
