#include "tests/fakes/failing_database.h"

namespace export_center::fakes {

Status FailingDatabase::WithTransaction(store::TxMode mode,
                                        const std::function<Status(store::Connection&)>& fn) {
  if (unavailable_) return Unavailable("database is down (FailingDatabase)");
  return inner_->WithTransaction(mode, fn);
}

Status FailingDatabase::WithConnection(const std::function<Status(store::Connection&)>& fn) {
  if (unavailable_) return Unavailable("database is down (FailingDatabase)");
  return inner_->WithConnection(fn);
}

}  // namespace export_center::fakes
