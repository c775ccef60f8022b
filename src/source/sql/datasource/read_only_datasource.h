#pragma once
// ReadOnlyDatasource: a named read-only database the sql-template route pages
// (docs/sql-template-route.md#read-only-datasources). Configured under `datasources:`; each
// definition names one.
//
// Every Query takes a connection of its own for the one statement — from a
// small cache of idle ones (idle_connection_cache.h) or a new one — resets its
// session (PostgreSQL RESET ALL + advisory unlock, MySQL COM_RESET_CONNECTION; a SQLite
// connection has none a SELECT can change), makes it read-only, switches to
// `schema` when one is given (else back to the default), runs one statement
// with `?` placeholders and gives the connection back. So nothing is held
// between pages, nothing one statement changed is seen by the next, and the
// connect (a PostgreSQL backend, a cold SQLite page cache) is not paid per
// page. Read-only is enforced where the database can (SQLite READONLY open,
// PostgreSQL/MySQL read-only sessions), a backstop behind the safety
// scanner. app/ opens a datasource per attempt, so no connection outlives
// the attempt that opened it.
//
// Values come back as the database prints them (text) or NULL; the caller
// converts them with the contract's column types. Keyset paging
// (docs/sql-template-route.md#paging) also needs the last row's values in a
// form it can bind back, how the database orders NULLs, and which result
// columns hold a primary key (Describe).
//
// Deadlines (docs/sql-template-route.md#deadlines): the connect and every
// statement are bounded (DatasourceTimeouts below); a statement
// past its timeout is cancelled by the database and fails with
// DeadlineExceeded. Interrupt cancels the statements running now from
// another thread, for an attempt that was aborted or a preview past its
// limit.
//
// Thread-safety: Query may be called from any thread; it shares nothing.
// Interrupt may be called from any thread, also while Query runs.
// Codes: Unavailable for connection trouble (retry the attempt later),
// DeadlineExceeded for a statement past its timeout (also retried),
// InvalidArgument for SQL the database rejects or a bad schema name, and
// Interrupt's reason once it was called.

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::source {

struct ResultSet {
  std::vector<std::string> columns;  // result column labels, in order
  std::vector<std::vector<std::optional<std::string>>> rows;
  // The last row's values as parameters that compare equal to the stored
  // values when bound back to a `?`: integers as integers, floating point
  // exactly, everything else as text the database converts to the column's
  // type; null for NULL. Empty when there are no rows.
  std::vector<nlohmann::json> last_row_params;
};

// The deadlines of a datasource's calls (keys datasources.NAME.*-ms,
// docs/sql-template-route.md#deadlines).
struct DatasourceTimeouts {
  // Connecting, and a cancel's second connection (MySQL's KILL QUERY).
  int connect_timeout_ms = 5000;
  // The longest one statement may run, lock waits included: the database
  // cancels it past this (PostgreSQL statement_timeout, MariaDB
  // max_statement_time, MySQL max_execution_time, SQLite's progress
  // handler) and Query fails with DeadlineExceeded.
  int statement_timeout_ms = 120000;
};

// What a statement returns, learned without reading a row.
struct QueryDescription {
  std::vector<std::string> columns;  // result column labels, in order
  // Result labels that together hold the primary key of one table the
  // statement reads, in the key's column order; empty when none is evident
  // (expressions, or a key only partly selected). A join or UNION may still
  // repeat those rows: a caller relying on uniqueness checks it.
  std::vector<std::string> primary_key;
};

// How the database orders values: what a keyset predicate must reproduce.
struct OrderingTraits {
  // NULL sorts before every value in ascending order (SQLite, MySQL and
  // MariaDB); false where it sorts after them (PostgreSQL).
  bool nulls_first = true;
  // `(a, b) > (?, ?)` compares lexicographically and becomes an index range
  // (SQLite, PostgreSQL). false: the comparison is written out column by
  // column (MariaDB evaluates row comparisons without a range).
  bool row_value_ranges = true;
};

// The plan the database gives for one statement, as it printed it
// (source/sql/plan_advice.h reads it). `kind` is the datasource's kind():
//   sqlite    one line per EXPLAIN QUERY PLAN row: "id<TAB>parent<TAB>detail"
//   postgres  EXPLAIN (FORMAT JSON)
//   mysql     EXPLAIN FORMAT=JSON
struct QueryPlan {
  std::string kind;
  std::string text;
};

// Whether anything was committed to the database between the watch's
// opening and a later moment — proven, not guessed: the keyset route counts
// an export's rows again after its last page only when something may have
// changed them (docs/sql-template-route.md#consistency-checks).
class CommitWatch {
 public:
  virtual ~CommitWatch() = default;
  // True only when the database proves that no transaction committed since
  // the watch was opened; false when one did, on any error, and whenever in
  // doubt. Not thread-safe: one caller asks.
  virtual bool NothingCommitted() = 0;
};

class ReadOnlyDatasource {
 public:
  virtual ~ReadOnlyDatasource() = default;
  virtual std::string_view kind() const = 0;  // sqlite | postgres | mysql

  // Runs `sql` with `params` bound to its `?` placeholders in order. Params
  // are JSON scalars: null, boolean, integer, number or string. Idempotent
  // and safe to retry: it only reads.
  virtual StatusOr<ResultSet> Query(std::string_view sql, const std::vector<nlohmann::json>& params,
                                    std::string_view schema) = 0;

  // The result labels of `sql` and the primary key among them, without
  // reading rows (prepared, not executed, where the database can). Same
  // codes as Query. The default runs `SELECT * FROM (sql) _t LIMIT 0` and
  // reports no key.
  virtual StatusOr<QueryDescription> Describe(std::string_view sql,
                                              const std::vector<nlohmann::json>& params,
                                              std::string_view schema);

  virtual OrderingTraits ordering() const { return {}; }

  // The database's plan of `sql` with `params` bound (planned, never run),
  // within `timeout_ms` — a planning deadline of its own, shorter than a
  // statement's. Same codes as Query; InvalidArgument from a datasource
  // that gives no plans (the default). Idempotent.
  virtual StatusOr<QueryPlan> Explain(std::string_view sql,
                                      const std::vector<nlohmann::json>& params,
                                      std::string_view schema, int timeout_ms);

  // Cancels the statements running now (PQcancel, KILL QUERY on a second
  // connection, sqlite3_interrupt) and fails them, and every Query or
  // Describe after, with `reason` (not OK). Returns once the cancels were
  // sent, bounded by the connect timeout; the database stops the statement
  // soon after. Idempotent; the first reason counts. The default (a
  // datasource with nothing to cancel) does nothing.
  virtual void Interrupt(Status reason) { (void)reason; }

  // A watch opened now, or nullptr where the database has no cheap, exact
  // way to tell (the default; MySQL and MariaDB). SQLite: PRAGMA
  // data_version on a connection the watch holds. PostgreSQL: equal
  // pg_current_snapshot() — no transaction ended in between.
  virtual std::unique_ptr<CommitWatch> WatchCommits(std::string_view schema) {
    (void)schema;
    return nullptr;
  }
};

// OK when `schema` is empty or matches [A-Za-z0-9_$]+: the
// name is spliced into a USE / SET search_path statement, so nothing else may
// pass. InvalidArgument otherwise.
Status CheckSchemaName(std::string_view schema);

}  // namespace export_center::source
