#pragma once
// IdleConnectionCache: the idle connections a datasource keeps between
// statements (docs/sql-template-route.md#read-only-datasources).
//
// A statement still has a connection to itself for its whole run and gives
// it back when done: no transaction spans two pages. What the pool saves is
// the connect — a PostgreSQL backend forked per page, a cold SQLite page
// cache per page. The datasource resets a connection's session (then
// read-only, time zone, schema) every time it takes one, so nothing a
// statement changed is seen by the next. app/ opens a datasource per
// attempt: its pool, and every connection in it, ends with the attempt.
//
// Take() hands out the most recently returned connection (its caches are
// the warmest) and closes the ones idle longer than `max_idle_age`; Return()
// closes a connection beyond `max_idle`. Thread-safe.

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace export_center::source {

template <typename Connection>  // an owning, movable handle, e.g. a unique_ptr
class IdleConnectionCache {
 public:
  using Clock = std::chrono::steady_clock;

  IdleConnectionCache(size_t max_idle, Clock::duration max_idle_age)
      : max_idle_(max_idle), max_idle_age_(max_idle_age) {}
  IdleConnectionCache(const IdleConnectionCache&) = delete;
  IdleConnectionCache& operator=(const IdleConnectionCache&) = delete;

  std::optional<Connection> Take() {
    std::vector<Connection> expired;  // closed outside the lock
    std::optional<Connection> taken;
    {
      MutexLock lock(&mu_);
      const auto oldest = Clock::now() - max_idle_age_;
      while (!idle_.empty() && idle_.front().second < oldest) {
        expired.push_back(std::move(idle_.front().first));
        idle_.erase(idle_.begin());
      }
      if (!idle_.empty()) {
        taken.emplace(std::move(idle_.back().first));
        idle_.pop_back();
      }
    }
    return taken;
  }

  void Return(Connection connection) {
    std::optional<Connection> surplus;  // closed outside the lock
    MutexLock lock(&mu_);
    if (idle_.size() >= max_idle_) {
      surplus.emplace(std::move(idle_.front().first));
      idle_.erase(idle_.begin());
    }
    idle_.emplace_back(std::move(connection), Clock::now());
  }

  size_t idle() {
    MutexLock lock(&mu_);
    return idle_.size();
  }

 private:
  const size_t max_idle_;
  const Clock::duration max_idle_age_;
  Mutex mu_;
  std::vector<std::pair<Connection, Clock::time_point>> idle_ GUARDED_BY(mu_);  // oldest first
};

// What the datasources keep: a few idle connections, none older than a minute.
inline constexpr size_t kPooledConnections = 4;
inline constexpr std::chrono::seconds kPooledConnectionAge{60};

}  // namespace export_center::source
