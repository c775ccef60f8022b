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

task::Column DateColumn() {
  task::Column c;
  c.key = "ordered_on";
  c.type = task::ColumnType::kDate;
  return c;
}

TEST(ParseDatabaseValueTest, ReadsTheDateAtTheStart) {
  auto v = ParseDatabaseValue(DateColumn(), std::string("2024-02-29"), "UTC");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const auto& d = std::get<task::Date>(*v);
  EXPECT_EQ(d.year(), 2024);
  EXPECT_EQ(d.month(), 2);
  EXPECT_EQ(d.day(), 29);
  v = ParseDatabaseValue(DateColumn(), std::string("2024-02-29 10:00:00"), "UTC");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<task::Date>(*v).ToString(), "2024-02-29");
  for (const char* text : {"2024-13-01", "2024-00-10", "2024-01-32", "24-01-01", "2024/01/01"}) {
    EXPECT_FALSE(ParseDatabaseValue(DateColumn(), std::string(text), "UTC").ok()) << text;
  }
}

// A replica may hold a day that does not exist (SQLite and MySQL without a
// strict mode store '2023-02-31' as written): the route refuses it as a bad
// value quoted like any other, as the provider route does, never as a date a
// writer then fails on.
TEST(ParseDatabaseValueTest, RefusesDaysThatDoNotExist) {
  for (const char* text : {"2023-02-31", "2023-02-29", "1900-02-29", "2023-04-31", "0000-01-01",
                           "2023-02-31 00:00:00"}) {
    auto v = ParseDatabaseValue(DateColumn(), std::string(text), "UTC");
    ASSERT_FALSE(v.ok()) << text;
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(v.status().message().find(std::string("\"") + text + "\""), std::string::npos)
        << v.status().message();
  }
  task::Column at = DateColumn();
  at.type = task::ColumnType::kDateTime;
  EXPECT_FALSE(ParseDatabaseValue(at, std::string("2023-02-31 10:00:00"), "UTC").ok());
  EXPECT_TRUE(ParseDatabaseValue(at, std::string("2024-02-29 10:00:00"), "UTC").ok());
}

TEST(AsciiLowerTest, FoldsAsciiOnly) {
  EXPECT_EQ(ToLowerAscii("Order_ID"), "order_id");
  EXPECT_EQ(ToLowerAscii("TRUE"), "true");
  EXPECT_EQ(ToLowerAscii("\xC3\x84"), "\xC3\x84");  // Ä stays as it is
}

}  // namespace
}  // namespace export_center::source
