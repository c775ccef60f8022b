#pragma once
// The node part of the ids a process makes (common/ids.h IdGenerator): one
// per process and store, taken from the database's export_id_node counter so
// two instances of a fleet never share one. Every SQL role class that makes
// ids takes its node here.

#include "common/status.h"
#include "store/database.h"

namespace export_center::store {

// Increments export_id_node's counter and returns this process's node
// (0..IdGenerator::kNodeCount-1). Internal when the counter row is missing
// (`export-center migrate` makes it).
StatusOr<int> ClaimIdNode(Database& db);

}  // namespace export_center::store
