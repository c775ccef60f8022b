#include "task/table.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/utf8.h"

namespace export_center::task {
namespace {

using nlohmann::json;

Column Col(ColumnType type, int scale = 2) {
  Column c;
  c.key = "k";
  c.title = "K";
  c.type = type;
  c.scale = scale;
  return c;
}

std::string Dec(std::string_view text, int scale) {
  auto d = ParseDecimal(text, scale);
  return d.ok() ? d->digits : "ERR";
}

TEST(ColumnType, RoundTrip) {
  for (auto t : {ColumnType::kString, ColumnType::kInteger, ColumnType::kDecimal,
                 ColumnType::kBoolean, ColumnType::kDate, ColumnType::kDateTime}) {
    EXPECT_EQ(ParseColumnType(ToString(t)), t);
  }
  EXPECT_FALSE(ParseColumnType("string"));
  EXPECT_FALSE(ParseColumnType(""));
}

TEST(ParseDecimal, PadsAndRoundsHalfUp) {
  EXPECT_EQ(Dec("68141.1", 2), "68141.10");
  EXPECT_EQ(Dec("-1234.5", 2), "-1234.50");
  EXPECT_EQ(Dec("1.005", 2), "1.01");
  EXPECT_EQ(Dec("1.004", 2), "1.00");
  EXPECT_EQ(Dec("-1.005", 2), "-1.01");
  EXPECT_EQ(Dec("2.675", 2), "2.68");
  EXPECT_EQ(Dec("9.995", 2), "10.00");
  EXPECT_EQ(Dec("999.5", 0), "1000");
  EXPECT_EQ(Dec("0.005", 2), "0.01");
  EXPECT_EQ(Dec("0.0049", 2), "0.00");
  EXPECT_EQ(Dec("-0.001", 2), "0.00");
  EXPECT_EQ(Dec("-0", 2), "0.00");
  EXPECT_EQ(Dec("000123", 1), "123.0");
  EXPECT_EQ(Dec("12", 0), "12");
  EXPECT_EQ(Dec("1e3", 2), "1000.00");
  EXPECT_EQ(Dec("1.5E-2", 3), "0.015");
  EXPECT_EQ(Dec("123456789012345678901234567890.123", 2), "123456789012345678901234567890.12");
}

TEST(ParseDecimal, RejectsGarbage) {
  for (auto bad : {"", "-", "abc", "1.", ".5", "1,5", " 1", "1 ", "+1", "1e", "0x10", "1..2", "NaN",
                   "Infinity", "1e99999", "1234567890123456789012345678901"}) {
    EXPECT_FALSE(ParseDecimal(bad, 2).ok()) << bad;
  }
  EXPECT_FALSE(ParseDecimal("1", -1).ok());
}

TEST(ParseWireValue, DecimalFromJsonNumberHasNoFloatArtefacts) {
  Column c = Col(ColumnType::kDecimal);
  auto v = ParseWireValue(c, json::parse("68141.1"));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<Decimal>(*v).digits, "68141.10");
  v = ParseWireValue(c, json::parse("0.1"));
  EXPECT_EQ(std::get<Decimal>(*v).digits, "0.10");
  v = ParseWireValue(c, json::parse("2.675"));
  EXPECT_EQ(std::get<Decimal>(*v).digits, "2.68");
  v = ParseWireValue(c, json::parse("-12"));
  EXPECT_EQ(std::get<Decimal>(*v).digits, "-12.00");
  v = ParseWireValue(c, json("-1234.50"));
  EXPECT_EQ(std::get<Decimal>(*v).digits, "-1234.50");
  v = ParseWireValue(Col(ColumnType::kDecimal, 4), json::parse("1e-3"));
  EXPECT_EQ(std::get<Decimal>(*v).digits, "0.0010");
  EXPECT_FALSE(ParseWireValue(c, json(true)).ok());
  EXPECT_FALSE(ParseWireValue(c, json("12a")).ok());
  EXPECT_FALSE(ParseWireValue(c, json::array()).ok());
}

TEST(ParseWireValue, Integer) {
  Column c = Col(ColumnType::kInteger);
  EXPECT_EQ(std::get<int64_t>(*ParseWireValue(c, json(42))), 42);
  EXPECT_EQ(std::get<int64_t>(*ParseWireValue(c, json("9223372036854775807"))), INT64_MAX);
  EXPECT_EQ(std::get<int64_t>(*ParseWireValue(c, json("-9223372036854775808"))), INT64_MIN);
  EXPECT_EQ(std::get<int64_t>(*ParseWireValue(c, json::parse("1900000000000000009"))),
            1900000000000000009LL);
  EXPECT_EQ(std::get<int64_t>(*ParseWireValue(c, json::parse("5.0"))), 5);
  EXPECT_FALSE(ParseWireValue(c, json::parse("5.5")).ok());
  EXPECT_FALSE(ParseWireValue(c, json::parse("18446744073709551615")).ok());
  EXPECT_FALSE(ParseWireValue(c, json("9223372036854775808")).ok());
  EXPECT_FALSE(ParseWireValue(c, json("12 ")).ok());
  EXPECT_FALSE(ParseWireValue(c, json("+12")).ok());
  EXPECT_FALSE(ParseWireValue(c, json("")).ok());
  EXPECT_FALSE(ParseWireValue(c, json(true)).ok());
}

TEST(ParseWireValue, BooleanStringAndNull) {
  EXPECT_EQ(std::get<bool>(*ParseWireValue(Col(ColumnType::kBoolean), json(true))), true);
  EXPECT_FALSE(ParseWireValue(Col(ColumnType::kBoolean), json(1)).ok());
  EXPECT_FALSE(ParseWireValue(Col(ColumnType::kBoolean), json("true")).ok());
  EXPECT_EQ(std::get<std::string>(*ParseWireValue(Col(ColumnType::kString), json("=1+1"))), "=1+1");
  EXPECT_FALSE(ParseWireValue(Col(ColumnType::kString), json(12)).ok());
  for (auto t : {ColumnType::kString, ColumnType::kInteger, ColumnType::kDecimal,
                 ColumnType::kBoolean, ColumnType::kDate, ColumnType::kDateTime}) {
    auto v = ParseWireValue(Col(t), json(nullptr));
    ASSERT_TRUE(v.ok());
    EXPECT_TRUE(std::holds_alternative<std::monostate>(*v));
  }
}

TEST(ParseWireValue, Date) {
  Column c = Col(ColumnType::kDate);
  auto v = ParseWireValue(c, json("2024-02-29"));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<Date>(*v).year(), 2024);
  EXPECT_EQ(std::get<Date>(*v).month(), 2);
  EXPECT_EQ(std::get<Date>(*v).day(), 29);
  EXPECT_TRUE(ParseWireValue(c, json("2000-02-29")).ok());  // divisible by 400: a leap year
  for (auto bad : {"2023-02-29", "2023-02-31", "2023-04-31", "1900-02-29", "2024-13-01",
                   "2024-00-10", "2024-1-01", "2024-01-01T00:00", "20240101", "0000-01-01", ""}) {
    EXPECT_FALSE(ParseWireValue(c, json(bad)).ok()) << bad;
  }
  EXPECT_FALSE(ParseWireValue(c, json(20240101)).ok());
}

TEST(ParseWireValue, DateTime) {
  Column c = Col(ColumnType::kDateTime);
  auto ms = [&](const json& j) {
    auto v = ParseWireValue(c, j);
    return v.ok() ? std::get<DateTime>(*v).epoch_ms : -1;
  };
  // 2026-08-03T10:00:00Z
  const int64_t base = civil::DaysFromYmd(2026, 8, 3) * 86400000LL + 10 * 3600000LL;
  EXPECT_EQ(ms("2026-08-03T18:00:00+08:00"), base);
  EXPECT_EQ(ms("2026-08-03T18:00:00+0800"), base);
  EXPECT_EQ(ms("2026-08-03T18:00+08"), base);
  EXPECT_EQ(ms("2026-08-03T10:00:00Z"), base);
  EXPECT_EQ(ms("2026-08-03 05:30:00-04:30"), base);
  EXPECT_EQ(ms("2026-08-03T10:00:00.123456Z"), base + 123);
  EXPECT_EQ(ms("2026-08-03T10:00:00.5Z"), base + 500);
  EXPECT_EQ(ms(json(base)), base);
  EXPECT_EQ(ms("1970-01-01T00:00:00Z"), 0);
  for (auto bad : {"2026-08-03T10:00:00", "2026-08-03", "2026-08-03T24:00:00Z",
                   "2026-08-03T10:00:60Z", "2026-08-03T10:00:00+25:00", "2026-08-03T10:00:00.Z",
                   "2026-08-03T10:00:00Zjunk", "yesterday"}) {
    EXPECT_EQ(ms(bad), -1) << bad;
  }
  EXPECT_EQ(ms(json(1.5)), -1);
  EXPECT_EQ(ms(json(true)), -1);
}

TEST(ParseWireValue, ErrorNamesColumnAndValue) {
  Column c = Col(ColumnType::kDate);
  c.key = "registeredOn";
  auto v = ParseWireValue(c, json("31/12/2024"));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("registeredOn"), std::string::npos);
  EXPECT_NE(v.status().message().find("31/12/2024"), std::string::npos);
}

// A long Chinese date in a typed column (docs/task-lifecycle.md#failure-classes). The message
// quotes the value cut between characters (the old cut at byte 64 fell inside one and the stored
// message then broke every JSON dump of the task).
TEST(ParseWireValue, ErrorQuotesLongTextWholeCharactersOnly) {
  std::string value;
  for (int i = 0; i < 6; ++i) value += "下单日期2026年12月1日";
  for (ColumnType type : {ColumnType::kDate, ColumnType::kDecimal, ColumnType::kInteger,
                          ColumnType::kDateTime, ColumnType::kBoolean}) {
    Column c = Col(type);
    c.key = "registeredOn";
    auto v = ParseWireValue(c, json(value));
    ASSERT_FALSE(v.ok()) << ToString(type);
    const std::string& message = v.status().message();
    EXPECT_TRUE(utf8::IsValid(message)) << message;
    EXPECT_NE(message.find("registeredOn"), std::string::npos) << message;
    EXPECT_NE(message.find("\"下单日期2026年12月1日"), std::string::npos) << message;
    EXPECT_NE(message.find("..."), std::string::npos) << message;
    EXPECT_LT(message.size(), 200u) << message;
  }
}

TEST(ParseDecimal, ErrorQuotesLongOrInvalidTextAsValidUtf8) {
  std::string value;
  for (int i = 0; i < 6; ++i) value += "下单日期2026年12月1日";
  for (const std::string& text : {value, std::string("12\xFF.34"), value + "\xE5"}) {
    auto d = ParseDecimal(text, 2);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(utf8::IsValid(d.status().message())) << d.status().message();
    EXPECT_LT(d.status().message().size(), 100u);
  }
}

TEST(ValidateColumns, Limits) {
  std::vector<Column> cols;
  EXPECT_FALSE(ValidateColumns(cols).ok());
  for (int i = 0; i < 100; ++i) {
    Column c = Col(ColumnType::kString);
    c.key = "c" + std::to_string(i);
    cols.push_back(c);
  }
  EXPECT_TRUE(ValidateColumns(cols).ok());
  cols.push_back(cols.back());
  cols.back().key = "extra";
  EXPECT_FALSE(ValidateColumns(cols).ok());
  cols.pop_back();
  cols[1].key = "c0";
  EXPECT_FALSE(ValidateColumns(cols).ok());
  cols[1].key = "";
  EXPECT_FALSE(ValidateColumns(cols).ok());
  cols[1].key = "c1";
  cols[1].width = 256;
  EXPECT_FALSE(ValidateColumns(cols).ok());
  cols[1].width = 20;
  cols[1].scale = 11;
  EXPECT_FALSE(ValidateColumns(cols).ok());
}

TEST(ParseWireColumns, ParsesAndValidates) {
  auto cols = ParseWireColumns(json::parse(R"([
    {"key":"id","title":"ID","type":"INTEGER","width":20},
    {"key":"balance","title":"余额","type":"DECIMAL","scale":2,"format":"#,##0.00"},
    {"key":"name","type":"STRING"}])"));
  ASSERT_TRUE(cols.ok()) << cols.status().ToString();
  ASSERT_EQ(cols->size(), 3u);
  EXPECT_EQ((*cols)[0].width, 20);
  EXPECT_EQ((*cols)[1].type, ColumnType::kDecimal);
  EXPECT_EQ((*cols)[1].format, "#,##0.00");
  EXPECT_EQ((*cols)[2].title, "name");
  EXPECT_FALSE(ParseWireColumns(json::parse(R"([{"key":"a","type":"MONEY"}])")).ok());
  EXPECT_FALSE(ParseWireColumns(json::parse(R"([{"type":"STRING"}])")).ok());
  EXPECT_FALSE(ParseWireColumns(json::parse(R"([{"key":"a","type":"STRING","width":-1}])")).ok());
  EXPECT_FALSE(ParseWireColumns(json::parse(R"({"key":"a"})")).ok());
  EXPECT_FALSE(ParseWireColumns(json::array()).ok());
}

}  // namespace
}  // namespace export_center::task
