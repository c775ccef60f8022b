#pragma once
// A real database the SQL route's tests read as a business replica: a SQLite
// file, or a throwaway PostgreSQL or MariaDB server on loopback. What the
// read-only datasource refuses (DDL, seeding, a lock another session holds)
// runs here through connections of the test's own.
//
// One per kind for a whole test binary (SharedReplica), so a binary's tests
// pay one server start; a kind this build leaves out (no
// EXPORT_CENTER_WITH_POSTGRES/MYSQL) answers Unavailable like a server that
// would not start, and EC_REQUIRE_REAL_SERVER decides what that means.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "source/sql/datasource/read_only_datasource.h"
#include "tests/support/once_per_kind.h"

namespace export_center::testing {

using TextRows = std::vector<std::vector<std::string>>;

// A connection of its own, kept open until destroyed: for a transaction or a
// lock that must outlive one statement.
class ReplicaSession {
 public:
  virtual ~ReplicaSession() = default;
  virtual Status Exec(const std::string& sql) = 0;
};

class ReplicaDatabase {
 public:
  // kind: "sqlite", "postgres", or "mariadb" (also spelled "mysql"). `name`
  // tells this test's file or server apart from another's.
  static StatusOr<std::unique_ptr<ReplicaDatabase>> Start(const std::string& kind,
                                                          const std::string& name);
  virtual ~ReplicaDatabase() = default;

  // Runs `sql` (statements separated by `;`); in `schema` (a PostgreSQL
  // schema or a MariaDB database) when one is given.
  Status Exec(const std::string& sql, const std::string& schema = "") {
    return Run(sql, schema, nullptr);
  }
  // The rows of one SELECT as the database prints them; NULL as "<NULL>".
  StatusOr<TextRows> Query(const std::string& sql, const std::string& schema = "") {
    TextRows rows;
    EC_RETURN_IF_ERROR(Run(sql, schema, &rows));
    return rows;
  }
  virtual StatusOr<std::unique_ptr<ReplicaSession>> OpenSession() = 0;
  // A new read-only datasource over the database, as app/ opens one.
  virtual std::shared_ptr<source::ReadOnlyDatasource> Open(
      const source::DatasourceTimeouts& timeouts = {}) = 0;

 protected:
  // Runs `sql` on a connection of its own, the last result's rows into *rows
  // when given.
  virtual Status Run(const std::string& sql, const std::string& schema, TextRows* rows) = 0;
};

// The started database of `kind` for this binary, seeded once by `seed`; or
// nullptr with the reason in *why.
ReplicaDatabase* SharedReplica(const std::string& kind, const std::string& name,
                               const std::function<Status(ReplicaDatabase&)>& seed,
                               std::string* why);

}  // namespace export_center::testing
