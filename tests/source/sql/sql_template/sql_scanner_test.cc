// Hostile templates: each must be rejected with a reason naming what was
// found; ordinary read-only queries must pass.
#include "source/sql/sql_template/sql_scanner.h"

#include <gtest/gtest.h>

namespace export_center::sql_template {
namespace {

void ExpectRejected(const std::string& sql, const std::string& reason) {
  Status s = ScanSql(sql);
  EXPECT_FALSE(s.ok()) << "accepted: " << sql;
  EXPECT_NE(s.message().find(reason), std::string::npos)
      << "sql: " << sql << "\nmessage: " << s.message();
}

TEST(SqlScanner, AcceptsReadOnlyQueries) {
  for (const char* sql : {
           "SELECT * FROM orders WHERE id = ? AND status IN (?, ?)",
           "  select a, b from t where name like ? order by a desc;  ",
           "WITH x AS (SELECT 1 AS n) SELECT n FROM x",
           "(SELECT 1) UNION ALL (SELECT 2)",
           "SELECT 'DROP TABLE t; -- not code' AS s, \"update\" FROM t",
           "SELECT REPLACE(name, 'a', 'b') FROM t -- trailing comment",
           "SELECT /* hint */ CAST(x AS CHAR CHARACTER SET utf8mb4) FROM t",
           "SELECT `order`, updated_at, deleted_flag FROM t LIMIT 10 OFFSET 5",
           "SELECT '中文' AS name FROM t",
       }) {
    Status s = ScanSql(sql);
    EXPECT_TRUE(s.ok()) << sql << ": " << s.ToString();
  }
}

TEST(SqlScanner, RejectsStackedQueries) {
  ExpectRejected("SELECT 1; DROP TABLE users", "multiple statements");
  ExpectRejected("SELECT 1;;", "multiple statements");
  ExpectRejected("SELECT '\\'; DELETE FROM t; -- '", "read as PostgreSQL");
}

TEST(SqlScanner, RejectsDmlAndDdl) {
  ExpectRejected("DELETE FROM t", "not SELECT or WITH");
  ExpectRejected("UPDATE t SET a = 1", "not SELECT or WITH");
  ExpectRejected("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
                 "forbidden keyword DELETE");
  ExpectRejected("SELECT * FROM t WHERE 1 = 1 UNION SELECT 1 FROM (INSERT INTO x VALUES (1))",
                 "INSERT");
  ExpectRejected("select 1 from t where exists (select 1) and truncate",
                 "forbidden keyword TRUNCATE");
}

TEST(SqlScanner, CommentsCannotHideKeywords) {
  ExpectRejected("SELECT 1 /*! ; DROP TABLE t */", "MySQL executable comment");
  ExpectRejected("SELECT 1 /*M!100000 , SLEEP(5) */", "MySQL executable comment");
  ExpectRejected("SELECT 1 # comment in MySQL\n; DROP TABLE t", "multiple statements");
  // PostgreSQL reads '#' as an operator, so the rest of the line runs there.
  ExpectRejected("SELECT 1 # 2, pg_sleep(10)", "forbidden function PG_SLEEP(");
  // MySQL reads "--x" as minus minus x, not as a comment.
  ExpectRejected("SELECT 1 --1, SLEEP(5)", "forbidden function SLEEP(");
  ExpectRejected("SELECT 1 /* a /* b */ , SLEEP(1) */", "nested block comment");
  ExpectRejected("SELECT 1 /* unterminated", "unterminated block comment");
}

TEST(SqlScanner, RejectsLockingReads) {
  ExpectRejected("SELECT * FROM t WHERE id = ? FOR UPDATE", "locking read FOR UPDATE");
  ExpectRejected("SELECT * FROM t FOR SHARE", "locking read FOR SHARE");
  ExpectRejected("SELECT * FROM t FOR NO KEY UPDATE", "locking read FOR NO");
  ExpectRejected("SELECT * FROM t LOCK IN SHARE MODE", "LOCK IN SHARE MODE");
}

TEST(SqlScanner, RejectsFileAccessAndSleeps) {
  ExpectRejected("SELECT * FROM t INTO OUTFILE '/tmp/x'", "INTO OUTFILE");
  ExpectRejected("SELECT a INTO DUMPFILE '/tmp/x' FROM t", "INTO DUMPFILE");
  ExpectRejected("SELECT a INTO new_table FROM t", "INTO");
  ExpectRejected("SELECT LOAD_FILE('/etc/passwd')", "LOAD_FILE(");
  ExpectRejected("SELECT SLEEP (5)", "SLEEP(");
  ExpectRejected("SELECT BENCHMARK(1000000, MD5('a'))", "BENCHMARK(");
  ExpectRejected("SELECT SOURCE_POS_WAIT('binlog.000001', 4, 60)", "SOURCE_POS_WAIT(");
  ExpectRejected("SELECT master_pos_wait('binlog.000001', 4)", "MASTER_POS_WAIT(");
  ExpectRejected("SELECT MASTER_GTID_WAIT('0-1-100', 60)", "MASTER_GTID_WAIT(");
  ExpectRejected("SELECT WAIT_FOR_EXECUTED_GTID_SET('uuid:1-5', 60)",
                 "WAIT_FOR_EXECUTED_GTID_SET(");
  ExpectRejected("SELECT 1 FROM t WHERE WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS('uuid:1-5') = 0",
                 "WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS(");
  ExpectRejected("SELECT pg_catalog.pg_sleep(1)", "PG_SLEEP(");
  ExpectRejected("SELECT \"pg_sleep\"(1)", "PG_SLEEP(");
  ExpectRejected("SELECT pg_read_file('/etc/passwd')", "PG_READ_FILE(");
  ExpectRejected("SELECT lo_import('/etc/passwd')", "LO_IMPORT(");
  ExpectRejected("SELECT * FROM dblink('host=x', 'select 1') AS t(a int)", "DBLINK(");
  ExpectRejected("SELECT 1 FROM t WHERE x = ? ; COPY t TO '/tmp/x'", "multiple statements");
  ExpectRejected("SELECT nextval('s')", "NEXTVAL(");
}

TEST(SqlScanner, RejectsUnicodeLookAlikes) {
  // Fullwidth "ＳＥＬＥＣＴ" and a Cyrillic "Е" in DELETE.
  ExpectRejected("\xEF\xBC\xB3\xEF\xBC\xA5\xEF\xBC\xAC\xEF\xBC\xA5\xEF\xBC\xA3\xEF\xBC\xB4 1",
                 "non-ASCII character U+FF33");
  ExpectRejected(
      "SELECT 1 FROM t WHERE D\xD0\x95"
      "LETE = 1",
      "non-ASCII character U+0415");
  ExpectRejected(
      "SELECT 1\xC2\xA0"
      "FROM t",
      "U+00A0");
}

TEST(SqlScanner, RejectsUnterminatedLiterals) {
  ExpectRejected("SELECT 'abc", "unterminated string literal");
  ExpectRejected("SELECT 1 FROM t WHERE a = $x$ ; DROP TABLE t", "multiple statements");
}

TEST(SqlScanner, ValidateOrderByWhitelistsColumns) {
  std::vector<std::string> cols = {"id", "created_at", "Amount"};
  EXPECT_EQ(*ValidateOrderBy("created_at desc, id", cols), "created_at DESC, id");
  EXPECT_EQ(*ValidateOrderBy("  ", cols), "");
  EXPECT_EQ(*ValidateOrderBy("amount ASC", cols), "Amount ASC");
  for (const char* bad : {"name", "id; drop table t", "id desc nulls", "id,", "(select 1)",
                          "id DESC, created_at sideways", "1"}) {
    auto r = ValidateOrderBy(bad, cols);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("orderBy"), std::string::npos);
    }
  }
}

TEST(SqlScanner, CheckQueryEnabled) {
  EXPECT_TRUE(CheckQueryEnabled("ORDER_LIST", {"ORDER_LIST"}).ok());
  Status s = CheckQueryEnabled("USER_LIST", {"ORDER_LIST"});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("USER_LIST"), std::string::npos);
}

}  // namespace
}  // namespace export_center::sql_template
