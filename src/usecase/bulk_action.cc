#include "usecase/bulk_action.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/byte_sink.h"
#include "usecase/access.h"

namespace export_center::usecase {
namespace {

using task::TaskState;

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

// The filter the action runs over; no states left: nothing applies.
store::OperatorFilter ActionFilter(const BulkRequest& r) {
  store::OperatorFilter f = r.filter;
  f.any_status = ActionStates(r.action, r.filter.any_status);
  return f;
}

StatusOr<int64_t> CountOf(store::TaskOperations& ops, const store::OperatorFilter& f) {
  if (f.any_status.empty()) return int64_t{0};
  return ops.CountTasks(f);
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

StatusOr<MatchedSet> MatchedSetOf(store::TaskOperations& ops, const store::OperatorFilter& f,
                                  int64_t max, int batch_size) {
  MatchedSet m;
  int64_t after = 0;
  while (!f.any_status.empty() && static_cast<int64_t>(m.ids.size()) < max) {
    const int batch =
        static_cast<int>(std::min<int64_t>(batch_size, max - static_cast<int64_t>(m.ids.size())));
    EC_ASSIGN_OR_RETURN(std::vector<int64_t> ids, ops.ListTaskIds(f, after, batch));
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

// One task of a bulk action, by the rules of the single retry or cancel.
Status ActOnOne(const BulkDeps& deps, const std::string& action, int64_t task_id,
                const std::string& trace_id) {
  if (action == "CANCEL") return deps.catalog->RequestCancel(task_id).status();
  EC_ASSIGN_OR_RETURN(task::Task t, deps.operations->GetTask(task_id));
  // The single retry's rules (CheckManualRetry), but for the type's
  // permission: the operator retries on the owner's behalf.
  const registry::ExportDefinition* def = deps.registry->Current()->Find(t.export_type);
  EC_RETURN_IF_ERROR(CheckManualRetry(t, def));
  return deps.catalog->ManualRetry(task_id, trace_id).status();
}

}  // namespace

StatusOr<BulkCount> CountBulkAction(const BulkDeps& deps, const BulkRequest& request) {
  const store::OperatorFilter f = ActionFilter(request);
  BulkCount count;
  EC_ASSIGN_OR_RETURN(count.matched, CountOf(*deps.operations, f));
  if (count.matched <= deps.max_tasks) {
    EC_ASSIGN_OR_RETURN(MatchedSet set,
                        MatchedSetOf(*deps.operations, f, count.matched, deps.batch_size));
    count.fingerprint = std::move(set.fingerprint);
  }
  return count;
}

StatusOr<store::BulkActionRecord> RunBulkAction(const BulkDeps& deps,
                                                const identity::Principal& actor,
                                                const BulkRequest& r, const std::string& trace_id) {
  if (!r.expected_count) {
    return InvalidArgument(
        "expectedCount is required: count first (POST /operator/bulk-actions/count) and confirm");
  }
  const store::OperatorFilter f = ActionFilter(r);
  EC_ASSIGN_OR_RETURN(int64_t matched, CountOf(*deps.operations, f));
  if (matched != *r.expected_count) {
    return Conflict("the filter now matches " + std::to_string(matched) + " tasks, not " +
                    std::to_string(*r.expected_count) + "; count again and confirm");
  }
  if (matched > deps.max_tasks) {
    return LimitExceeded("the filter matches " + std::to_string(matched) +
                         " tasks; a bulk action takes at most " + std::to_string(deps.max_tasks) +
                         ": narrow the filter");
  }
  if (!r.expected_fingerprint) {
    return InvalidArgument(
        "expectedFingerprint is required: count first (POST /operator/bulk-actions/count) and "
        "confirm");
  }
  // The set confirmed, not only its size: the very tasks that were counted.
  EC_ASSIGN_OR_RETURN(MatchedSet set, MatchedSetOf(*deps.operations, f, matched, deps.batch_size));
  if (set.fingerprint != *r.expected_fingerprint) {
    return Conflict("the filter still matches " + std::to_string(matched) +
                    " tasks, but not the ones counted; count again and confirm");
  }
  store::BulkActionRecord audit;
  audit.actor = actor.user;
  audit.actor_tenant = actor.tenant;
  audit.scope_tenant = r.filter.scope.tenant_id;
  audit.scope_app = r.filter.scope.app_code;
  audit.action = r.action;
  audit.filter_json = r.filter_json;
  audit.matched = matched;
  EC_ASSIGN_OR_RETURN(audit.id, deps.operations->BeginBulkAction(audit));
  // The confirmed ids in ascending order: a task that came to match after the
  // confirmation is left alone.
  audit.outcome = "COMPLETED";
  for (int64_t task_id : set.ids) {
    Status s = ActOnOne(deps, r.action, task_id, trace_id);
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
  if (Status s = deps.operations->FinishBulkAction(audit); !s.ok()) {
    spdlog::error("bulk action {} finished but its audit row was not updated: {}", audit.id,
                  s.ToString());
  }
  spdlog::info(
      "bulk action id={} action={} actor={} tenantId={} matched={} succeeded={} skipped={} "
      "failed={} outcome={}",
      audit.id, audit.action, audit.actor, audit.scope_tenant.value_or("*"), audit.matched,
      audit.succeeded, audit.skipped, audit.failed, audit.outcome);
  if (r.action == "RETRY" && audit.succeeded > 0 && deps.on_requeued) deps.on_requeued();
  return audit;
}

}  // namespace export_center::usecase
