#pragma once
// Database: the small connection seam under SqlTaskStore (docs/store.md).
//
// A Database runs SQL with positional `?` parameters and returns rows as
// text, so one set of statements serves every backend; the PostgreSQL backend
// rewrites `?` to `$n`. Times are never parameters: statements compute them
// with the dialect's now-expression (dialect.h).
//
// Thread-safety: a Database may be used from any thread; each callback gets
// a Connection that belongs to the calling thread until the callback returns.
// A Connection must not be kept or shared beyond the callback.
// Codes: Unavailable for busy/locked/serialization/connection trouble (retry
// the whole transaction), Conflict for a unique-key violation,
// InvalidArgument for a value too long for its column, Internal else.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "store/dialect.h"

namespace export_center::store {

// The deadlines of a server database's connections (database.*-ms,
// docs/store.md#deadlines): connecting, and each statement, lock waits
// included — past it the server cancels the statement and the call fails
// with Unavailable (retry the whole transaction). SQLite, a local file,
// bounds its lock waits with its busy timeout instead.
struct SessionTimeouts {
  int connect_timeout_ms = 5000;
  int statement_timeout_ms = 60000;
};

// One bound parameter: NULL, a 64-bit integer, a double or a string.
class SqlValue {
 public:
  using Storage = std::variant<std::monostate, int64_t, double, std::string>;

  SqlValue() = default;                                 // NULL
  SqlValue(std::nullptr_t) {}                           // NOLINT: implicit by design
  SqlValue(std::nullopt_t) {}                           // NOLINT
  SqlValue(int v) : v_(int64_t{v}) {}                   // NOLINT
  SqlValue(long v) : v_(int64_t{v}) {}                  // NOLINT
  SqlValue(long long v) : v_(int64_t{v}) {}             // NOLINT
  SqlValue(double v) : v_(v) {}                         // NOLINT
  SqlValue(std::string v) : v_(std::move(v)) {}         // NOLINT
  SqlValue(std::string_view v) : v_(std::string(v)) {}  // NOLINT
  SqlValue(const char* v) : v_(std::string(v)) {}       // NOLINT
  template <typename T>
  SqlValue(const std::optional<T>& v) {  // NOLINT
    if (v) *this = SqlValue(*v);
  }

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  const Storage& storage() const { return v_; }

 private:
  Storage v_;
};

using SqlParams = std::vector<SqlValue>;

// One result row; every cell is text (or NULL) as the database printed it.
class Row {
 public:
  Row() = default;
  explicit Row(std::vector<std::optional<std::string>> cells) : cells_(std::move(cells)) {}

  size_t size() const { return cells_.size(); }
  bool IsNull(size_t i) const { return i >= cells_.size() || !cells_[i].has_value(); }
  // "" for NULL.
  const std::string& Text(size_t i) const;
  std::optional<std::string> OptText(size_t i) const;
  // 0 for NULL or text that is not an integer.
  int64_t Int(size_t i) const;
  std::optional<int64_t> OptInt(size_t i) const;

 private:
  std::vector<std::optional<std::string>> cells_;
};

using Rows = std::vector<Row>;

class Connection {
 public:
  virtual ~Connection() = default;
  // Runs one statement and returns its rows.
  virtual StatusOr<Rows> Query(std::string_view sql, const SqlParams& params = {}) = 0;
  // Runs one statement and returns the number of rows it changed.
  virtual StatusOr<int64_t> Exec(std::string_view sql, const SqlParams& params = {}) = 0;
};

enum class TxMode {
  kRead,   // may read; SQLite: BEGIN (deferred)
  kWrite,  // will write; SQLite: BEGIN IMMEDIATE, taking the write lock up front so a
           // transaction never fails half-way on a lock upgrade
};

class Database {
 public:
  virtual ~Database() = default;

  virtual const Dialect& dialect() const = 0;

  // Runs `fn` between BEGIN and COMMIT on one connection. A non-OK Status
  // from `fn` (or from COMMIT) rolls back and is returned unchanged. `fn` must
  // not call back into this Database (a pool of one would deadlock).
  // A backend may run `fn` again, in a new transaction, when the server
  // rolled the whole transaction back to break a lock conflict (MySQL: a
  // deadlock or a lock wait timeout); nothing of the first run was committed.
  // So `fn` touches nothing but the database and outputs it resets first.
  virtual Status WithTransaction(TxMode mode, const std::function<Status(Connection&)>& fn) = 0;

  // Runs `fn` on one connection in autocommit mode: each statement is its own
  // transaction.
  virtual Status WithConnection(const std::function<Status(Connection&)>& fn) = 0;

  // One statement in autocommit mode (tests use these to move clocks by
  // rewriting timestamps).
  StatusOr<Rows> Query(std::string_view sql, const SqlParams& params = {});
  StatusOr<int64_t> Exec(std::string_view sql, const SqlParams& params = {});
};

// The retry WithTransaction's contract allows, for the server backends: runs
// `run_once` (one transaction from BEGIN to COMMIT or ROLLBACK) and, while it
// fails with *lock_conflict set — the server rolled the whole transaction
// back to break a deadlock or a lock wait, so nothing of it committed — runs
// it again, up to `retries` more times, each after a random pause of 5 ms to
// 25 ms × the attempt so the two sides do not collide again at once.
Status RunAgainAfterLockConflicts(int retries,
                                  const std::function<Status(bool* lock_conflict)>& run_once);

}  // namespace export_center::store
