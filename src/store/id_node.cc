#include "store/id_node.h"

#include "common/ids.h"

namespace export_center::store {

StatusOr<int> ClaimIdNode(Database& db) {
  int64_t node = 0;
  const Dialect& dialect = db.dialect();
  EC_RETURN_IF_ERROR(db.WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(int64_t n, c.Exec(dialect.Expand("UPDATE export_id_node SET next_node ="
                                                         " next_node + 1, updated_at = {NOW}"
                                                         " WHERE name = 'ID_NODE'")));
    if (n != 1) return Internal("export_id_node has no ID_NODE row; run `export-center migrate`");
    EC_ASSIGN_OR_RETURN(Rows rows,
                        c.Query("SELECT next_node FROM export_id_node WHERE name = 'ID_NODE'"));
    node = rows.at(0).Int(0) - 1;
    return Status::Ok();
  }));
  return static_cast<int>(node % IdGenerator::kNodeCount);
}

StatusOr<int64_t> LazyIds::Next() {
  MutexLock lock(&mu_);
  if (ids_ == nullptr) {
    EC_ASSIGN_OR_RETURN(int node, ClaimIdNode(*db_));
    ids_ = std::make_unique<IdGenerator>(node);
  }
  return ids_->Next();
}

}  // namespace export_center::store
