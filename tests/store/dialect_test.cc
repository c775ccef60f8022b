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

TEST(DialectTest, MysqlIgnoresDuplicatesWithInsertIgnoreAndDeclaresUtf8mb4Tables) {
  for (MysqlFlavor flavor : {MysqlFlavor::kMysql, MysqlFlavor::kMariaDb}) {
    Dialect d = MysqlDialect(flavor);
    EXPECT_EQ(d.name, "mysql");
    EXPECT_EQ(d.Expand("{INSERT_IGNORE} t (a) VALUES ({NOW}){ON_CONFLICT_IGNORE}"),
              "INSERT IGNORE INTO t (a) VALUES (CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))");
    EXPECT_EQ(d.Expand("SELECT 1{FOR_UPDATE}"), "SELECT 1 FOR UPDATE");
    EXPECT_TRUE(d.Expand("CREATE TABLE t (a {TEXT}){TABLE_OPTIONS}")
                    .starts_with("CREATE TABLE t (a MEDIUMTEXT) ENGINE=InnoDB DEFAULT "
                                 "CHARSET=utf8mb4 COLLATE="));
    EXPECT_FALSE(d.migration_lock.empty());
    EXPECT_FALSE(d.migration_unlock.empty());
  }
  EXPECT_NE(MysqlDialect(MysqlFlavor::kMariaDb).table_options.find("utf8mb4_nopad_bin"),
            std::string::npos);
  EXPECT_NE(MysqlDialect(MysqlFlavor::kMysql).table_options.find("utf8mb4_0900_bin"),
            std::string::npos);
  EXPECT_TRUE(MysqlDialect(MysqlFlavor::kMariaDb).index_exists_query.empty());
  EXPECT_FALSE(MysqlDialect(MysqlFlavor::kMysql).index_exists_query.empty())
      << "MySQL 8 has no CREATE INDEX IF NOT EXISTS";
  // The other databases keep plain TEXT and no table options.
  EXPECT_EQ(SqliteDialect().Expand("CREATE TABLE t (a {TEXT}){TABLE_OPTIONS}"),
            "CREATE TABLE t (a TEXT)");
  EXPECT_EQ(PostgresDialect().Expand("CREATE TABLE t (a {TEXT}){TABLE_OPTIONS}"),
            "CREATE TABLE t (a TEXT)");
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
