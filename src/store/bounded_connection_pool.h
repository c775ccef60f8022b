#pragma once
// BoundedConnectionPool: a bounded pool of backend connections shared by the SQLite
// and PostgreSQL Database backends.
//
// Thread-safety: Acquire() may be called from any thread. A Lease gives its
// holder exclusive use of one connection and returns it on destruction; a
// connection whose healthy() is false is closed instead of being pooled, so a
// broken network connection is replaced on the next Acquire().

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace export_center::store {

template <typename Conn>
class BoundedConnectionPool {
 public:
  using Factory = std::function<StatusOr<std::unique_ptr<Conn>>()>;

  class Lease {
   public:
    Lease(BoundedConnectionPool* pool, std::unique_ptr<Conn> conn)
        : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)), conn_(std::move(other.conn_)) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease() {
      if (pool_ != nullptr) pool_->Release(std::move(conn_));
    }
    Conn& operator*() { return *conn_; }
    Conn* operator->() { return conn_.get(); }

   private:
    BoundedConnectionPool* pool_;
    std::unique_ptr<Conn> conn_;
  };

  BoundedConnectionPool(int max_connections, Factory factory)
      : max_(max_connections < 1 ? 1 : max_connections), factory_(std::move(factory)) {}
  BoundedConnectionPool(const BoundedConnectionPool&) = delete;
  BoundedConnectionPool& operator=(const BoundedConnectionPool&) = delete;

  // Waits up to `timeout` for a free connection (opening one if the pool is
  // below its size). Unavailable on timeout or when opening fails.
  StatusOr<Lease> Acquire(std::chrono::milliseconds timeout) EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      while (idle_.empty() && open_ >= max_ && cv_.WaitUntil(&mu_, deadline)) {
      }
      if (idle_.empty() && open_ >= max_) {
        return Unavailable("all " + std::to_string(max_) + " database connections are busy");
      }
      if (!idle_.empty()) {
        std::unique_ptr<Conn> conn = std::move(idle_.back());
        idle_.pop_back();
        return Lease(this, std::move(conn));
      }
      ++open_;  // reserve the slot, then connect without holding the lock
    }
    StatusOr<std::unique_ptr<Conn>> conn = factory_();
    if (!conn.ok()) {
      Forget();
      return conn.status();
    }
    return Lease(this, std::move(conn).value());
  }

 private:
  void Release(std::unique_ptr<Conn> conn) EXCLUDES(mu_) {
    if (conn == nullptr || !conn->healthy()) {
      conn.reset();
      Forget();
      return;
    }
    MutexLock lock(&mu_);
    idle_.push_back(std::move(conn));
    cv_.Signal();
  }

  void Forget() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    --open_;
    cv_.Signal();
  }

  const int max_;
  const Factory factory_;
  Mutex mu_;
  CondVar cv_;
  std::vector<std::unique_ptr<Conn>> idle_ GUARDED_BY(mu_);
  int open_ GUARDED_BY(mu_) = 0;  // idle + leased
};

}  // namespace export_center::store
