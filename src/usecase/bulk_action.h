#pragma once
// The bulk action of the operators' console: retry or cancel every task a
// filter matches, counted first and confirmed with that count and the
// matched set's fingerprint, acted on in batches, audited
// (docs/http-api.md#operators-console). Each task goes by the rules of the
// single action (usecase/access.h: CheckManualRetry), but for the type's
// permission: the operator acts on the owner's behalf.
//
// Thread-safe: plain functions over the store seams.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "store/task_catalog.h"
#include "store/task_operations.h"
#include "task/task.h"

namespace export_center::usecase {

struct BulkDeps {
  store::TaskOperations* operations = nullptr;  // not owned
  store::TaskCatalog* catalog = nullptr;        // the single retry and cancel
  registry::Registry* registry = nullptr;       // not owned
  // Called once after a bulk retry re-queued tasks (wakes the publisher). Optional.
  std::function<void()> on_requeued{};
  // A bulk action matching more tasks than this is refused (LimitExceeded).
  int max_tasks = 5000;
  int batch_size = 100;
};

struct BulkRequest {
  std::string action{};  // RETRY | CANCEL
  // The operator's filter, scope decided; its states as the operator gave
  // them (narrowed here to those the action applies to).
  store::OperatorFilter filter{};
  std::string filter_json{};  // the filter as given, for the audit row
  std::optional<int64_t> expected_count{};
  std::optional<std::string> expected_fingerprint{};
};

struct BulkCount {
  int64_t matched = 0;
  // The matched set's fingerprint; nullopt over BulkDeps::max_tasks (the
  // action is refused anyway).
  std::optional<std::string> fingerprint{};
};

// How many tasks the action would act on now, and which.
StatusOr<BulkCount> CountBulkAction(const BulkDeps& deps, const BulkRequest& request);

// Acts on the very tasks that were counted, once the count and fingerprint
// still match (else InvalidArgument when absent, Conflict when changed,
// LimitExceeded over max_tasks); the audit record as finished. A task no
// longer in a state the action applies to is skipped, not failed.
StatusOr<store::BulkActionRecord> RunBulkAction(const BulkDeps& deps,
                                                const identity::Principal& actor,
                                                const BulkRequest& request,
                                                const std::string& trace_id);

}  // namespace export_center::usecase
