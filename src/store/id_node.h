#pragma once
// The node part of the ids a process makes (common/ids.h IdGenerator): one
// per process and store, taken from the database's export_id_node counter so
// two instances of a fleet never share one. Every SQL role class that makes
// ids takes its node here.

#include <cstdint>
#include <memory>

#include "common/ids.h"
#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "store/database.h"

namespace export_center::store {

// Increments export_id_node's counter and returns this process's node
// (0..IdGenerator::kNodeCount-1). Internal when the counter row is missing
// (`export-center migrate` makes it).
StatusOr<int> ClaimIdNode(Database& db);

// The ids of one SQL role class that is not part of SqlTaskStore (the mail
// outbox, the subscription ledger): its node is claimed on the first id, so
// opening the class makes no query and a database that is down at start-up
// fails the first write, not the process. Thread-safe.
class LazyIds {
 public:
  explicit LazyIds(Database* db) : db_(db) {}

  // A new id; the node claim's error when it could not be made.
  StatusOr<int64_t> Next() EXCLUDES(mu_);

 private:
  Database* const db_;  // not owned; outlives this
  Mutex mu_;
  std::unique_ptr<IdGenerator> ids_ GUARDED_BY(mu_);
};

}  // namespace export_center::store
