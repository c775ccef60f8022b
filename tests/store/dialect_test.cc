#include "store/dialect.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/sqlite/sqlite_error.h"

namespace export_center::store {
namespace {

TEST(DialectTest, ExpandReplacesEveryToken) {
  Dialect d = PostgresDialect();
  std::string sql = d.Expand(
      "{INSERT_IGNORE} t (a) SELECT {NOW} FROM g WHERE x = '{' {FOR_UPDATE}{ON_CONFLICT_IGNORE}");
  EXPECT_EQ(sql, "INSERT INTO t (a) SELECT " + d.now_ms + " FROM g WHERE x = '{'  FOR UPDATE" +
                     " ON CONFLICT DO NOTHING");
}

TEST(DialectTest, SqliteHoldsTheWriteLockInsteadOfRowLocks) {
  Dialect d = SqliteDialect();
  EXPECT_EQ(d.Expand("SELECT 1{FOR_UPDATE}"), "SELECT 1");
  EXPECT_NE(d.now_ms.find("strftime"), std::string::npos);
}

TEST(SqliteErrorTest, MapsBusyToUnavailableAndUniqueToConflict) {
  EXPECT_EQ(SqliteError(SQLITE_BUSY, nullptr, "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(SqliteError(SQLITE_LOCKED, nullptr, "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(SqliteError(SQLITE_BUSY_SNAPSHOT, nullptr, "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(SqliteError(SQLITE_CONSTRAINT_UNIQUE, nullptr, "x").code(), StatusCode::kConflict);
  EXPECT_EQ(SqliteError(SQLITE_CONSTRAINT_NOTNULL, nullptr, "x").code(), StatusCode::kInternal);
  EXPECT_EQ(SqliteError(SQLITE_ERROR, nullptr, "x").code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace export_center::store
