#include "store/postgres/postgres_database.h"

#include <gtest/gtest.h>

#include "store/postgres/postgres_error.h"

namespace export_center::store {
namespace {

TEST(PostgresErrorTest, MapsSqlStatesInOnePlace) {
  EXPECT_EQ(PostgresStatusCode("40001"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("40P01"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("08006"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("57P01"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("53300"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode(""), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("23505"), StatusCode::kConflict);
  EXPECT_EQ(PostgresStatusCode("22001"), StatusCode::kInvalidArgument);
  EXPECT_EQ(PostgresStatusCode("42P01"), StatusCode::kInternal);
  Status s = PostgresError("23505", "duplicate key\n", "exec");
  EXPECT_EQ(s.message(), "postgres exec: [23505] duplicate key");
}

}  // namespace
}  // namespace export_center::store
