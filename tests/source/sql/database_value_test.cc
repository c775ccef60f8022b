// Database text read as the contract's column types (database_value.h); the
// whole conversion of each type is tested through ParseDatabaseValue in
// sql_template_source_test.cc.

#include "source/sql/database_value.h"

#include <gtest/gtest.h>

#include "common/ascii.h"

namespace export_center::source {
namespace {

TEST(ParseDatabaseIntTest, WholeNumbersOnly) {
  int64_t v = 0;
  EXPECT_TRUE(ParseDatabaseInt("42", &v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(ParseDatabaseInt("+7", &v));
  EXPECT_EQ(v, 7);
  EXPECT_TRUE(ParseDatabaseInt("-9007199254740993", &v));
  EXPECT_EQ(v, -9007199254740993LL);
  for (const char* text : {"", "+", "12.0", "1e3", " 1", "99999999999999999999"}) {
    EXPECT_FALSE(ParseDatabaseInt(text, &v)) << text;
  }
}

TEST(ParseIsoDateTest, ReadsTheDateAtTheStart) {
  task::Date d;
  ASSERT_TRUE(ParseIsoDate("2024-02-29", &d));
  EXPECT_EQ(d.year, 2024);
  EXPECT_EQ(d.month, 2);
  EXPECT_EQ(d.day, 29);
  EXPECT_TRUE(ParseIsoDate("2024-02-29 10:00:00", &d));
  for (const char* text : {"2024-13-01", "2024-00-10", "2024-01-32", "24-01-01", "2024/01/01"}) {
    EXPECT_FALSE(ParseIsoDate(text, &d)) << text;
  }
}

TEST(AsciiLowerTest, FoldsAsciiOnly) {
  EXPECT_EQ(ToLowerAscii("Order_ID"), "order_id");
  EXPECT_EQ(ToLowerAscii("TRUE"), "true");
  EXPECT_EQ(ToLowerAscii("\xC3\x84"), "\xC3\x84");  // Ä stays as it is
}

}  // namespace
}  // namespace export_center::source
