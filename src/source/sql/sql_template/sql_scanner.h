#pragma once
// The sql-template route's safety scanner (docs/sql-template.md#safety-scanner).
//
// Templates come from business services' reviewed code, not from users, so
// `${}` is allowed; the scanner is the semantic backstop on the SQL that is
// about to run: one read-only statement, nothing that writes, locks, sleeps
// or reaches the file system. It is deliberately conservative: the SQL is
// read the way each supported database would read it (MySQL, PostgreSQL,
// SQLite differ on `#`, `--x`, backslashes, nested comments, dollar quotes)
// and rejected when any reading finds something forbidden. Comments are
// stripped; MySQL's executable comments (/*! */, /*M! */) are rejected.
// Words outside literals must be ASCII, so fullwidth or Cyrillic look-alikes
// cannot smuggle a keyword past the checks. docs/sql-template.md lists the
// rules.
//
// Thread-safety: pure functions.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::sql_template {

// OK when `sql` (rendered, with `?` placeholders) is a single SELECT or WITH
// statement (one trailing ';' allowed) free of DML/DDL keywords, locking
// reads, INTO, and dangerous functions (SLEEP(, pg_read_file(, ...).
// Otherwise InvalidArgument naming what was found and its offset, e.g.
// "unsafe SQL: locking read FOR UPDATE at offset 31".
Status ScanSql(std::string_view sql);

// Checks an orderBy clause against the result columns: comma-separated
// segments `column [ASC|DESC]`, the column matched case-insensitively.
// Returns the clause rebuilt from the allowed spellings ("a DESC, b"), ""
// for an empty clause, or InvalidArgument naming the offending segment.
StatusOr<std::string> ValidateOrderBy(std::string_view order_by,
                                      const std::vector<std::string>& allowed_columns);

// PermissionDenied unless `query_id` is one of the enabled scenarios.
Status CheckQueryEnabled(std::string_view query_id, const std::set<std::string>& enabled);

}  // namespace export_center::sql_template
