#pragma once
// FailingDatabase: a store::Database that forwards to a real one until it is
// told the database is down; from then on every call fails with Unavailable
// without reaching the real database. Put between a real backend and
// NewSqlTaskStore, it lets a test see how callers handle an outage while
// everything else runs the real SQL (leveldb's ErrorEnv wraps an Env the
// same way). Thread-safe.

#include <atomic>
#include <functional>
#include <memory>

#include "common/status.h"
#include "store/database.h"

namespace export_center::fakes {

class FailingDatabase final : public store::Database {
 public:
  explicit FailingDatabase(std::shared_ptr<store::Database> inner) : inner_(std::move(inner)) {}

  // While set, WithTransaction and WithConnection answer Unavailable and do
  // not run their callback.
  void SetUnavailable(bool unavailable) { unavailable_ = unavailable; }

  // ---- store::Database ----
  const store::Dialect& dialect() const override { return inner_->dialect(); }
  Status WithTransaction(store::TxMode mode,
                         const std::function<Status(store::Connection&)>& fn) override;
  Status WithConnection(const std::function<Status(store::Connection&)>& fn) override;

 private:
  std::shared_ptr<store::Database> inner_;
  std::atomic<bool> unavailable_{false};
};

}  // namespace export_center::fakes
