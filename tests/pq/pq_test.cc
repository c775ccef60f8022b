#include "pq/pq.h"

#include <gtest/gtest.h>

namespace export_center::pq {
namespace {

TEST(PostgresPlaceholdersTest, NumbersQuestionMarksOutsideQuotes) {
  EXPECT_EQ(ToPostgresPlaceholders("SELECT ? , '?', \"a?\", ?"), "SELECT $1 , '?', \"a?\", $2");
  EXPECT_EQ(ToPostgresPlaceholders("x = 'it''s ?' AND y = ?"), "x = 'it''s ?' AND y = $1");
  EXPECT_EQ(ToPostgresPlaceholders("no params"), "no params");
}

}  // namespace
}  // namespace export_center::pq
