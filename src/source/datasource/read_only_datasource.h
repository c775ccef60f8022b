#pragma once
// ReadOnlyDatasource: a named read-only database the sql-template route pages
// (docs/sql-template-route.md#read-only-datasources). Configured under `datasources:`; each
// definition names one.
//
// Every Query opens its own connection, switches to `schema` when one is
// given, runs one statement with `?` placeholders and closes the connection
// (a connection per page, so nothing leaks between tasks and
// no schema switch needs undoing). Connections are read-only where the
// database can enforce it (SQLite READONLY open, PostgreSQL/MySQL read-only
// sessions), a backstop behind the safety scanner.
//
// Values come back as the database prints them (text) or NULL; the caller
// converts them with the contract's column types.
//
// Thread-safety: Query may be called from any thread; it shares nothing.
// Codes: Unavailable for connection trouble (retry the attempt later),
// InvalidArgument for SQL the database rejects or a bad schema name.

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
};

// OK when `schema` is empty or matches [A-Za-z0-9_$]+: the
// name is spliced into a USE / SET search_path statement, so nothing else may
// pass. InvalidArgument otherwise.
Status CheckSchemaName(std::string_view schema);

}  // namespace export_center::source
