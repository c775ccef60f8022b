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

// ---- the rich options on the wire (docs/xlsx.md#rich-columns) ----

StatusOr<std::vector<Column>> Wire(const char* text, std::string_view locale = "",
                                   std::string_view default_language = "") {
  return ParseWireColumns(json::parse(text), locale, default_language);
}

TEST(ParseWireColumns, ReadsEveryRichOption) {
  auto cols = Wire(R"([
    {"key":"orderNo","title":["订单","单号"],"type":"STRING","merge":"SAME_VALUE"},
    {"key":"day","title":["订单","下单日"],"type":"DATE","merge":"SAME_VALUE",
     "mergeWithin":"orderNo"},
    {"key":"status","title":"状态","type":"STRING","labels":{"PAID":"已支付","NEW":"新建"},
     "labelMissing":"FAIL","style":{"headerFill":"#FFEEDD","headerFont":"#112233",
     "align":"CENTER","wrap":true},
     "highlight":{"op":"IN","values":["已支付","新建"],"fill":"#FFC7CE","font":"#9C0006"}},
    {"key":"amount","title":"金额","type":"DECIMAL","scale":2,"total":"SUM",
     "highlight":{"op":"GREATER","values":[1000],"fill":"#C6EFCE"}}])");
  ASSERT_TRUE(cols.ok()) << cols.status().ToString();
  const Column& no = (*cols)[0];
  EXPECT_EQ(no.title_groups, std::vector<std::string>{"订单"});
  EXPECT_EQ(no.title, "单号");
  EXPECT_EQ(no.merge, MergeMode::kSameValue);
  EXPECT_EQ((*cols)[1].merge_within, "orderNo");
  const Column& status = (*cols)[2];
  ASSERT_EQ(status.labels.size(), 2u);
  EXPECT_EQ(status.labels[0], (std::pair<std::string, std::string>{"NEW", "新建"}));
  EXPECT_EQ(status.labels[1], (std::pair<std::string, std::string>{"PAID", "已支付"}));
  EXPECT_EQ(status.label_missing, LabelMissing::kFail);
  EXPECT_EQ(status.style.header_fill, "#FFEEDD");
  EXPECT_EQ(status.style.header_font, "#112233");
  EXPECT_EQ(status.style.align, Align::kCenter);
  EXPECT_TRUE(status.style.wrap);
  EXPECT_EQ(status.highlight.op, HighlightOp::kIn);
  EXPECT_EQ(status.highlight.values, (std::vector<std::string>{"已支付", "新建"}));
  EXPECT_EQ(status.highlight.fill, "#FFC7CE");
  EXPECT_EQ(status.highlight.font, "#9C0006");
  EXPECT_EQ((*cols)[3].total, TotalKind::kSum);
  EXPECT_EQ((*cols)[3].highlight.values, std::vector<std::string>{"1000"});
}

TEST(ParseWireColumns, AnOldSendersColumnsHaveEveryOptionOff) {
  auto cols = Wire(R"([{"key":"a","title":"A","type":"INTEGER"}])");
  ASSERT_TRUE(cols.ok());
  Column plain;
  plain.key = "a";
  plain.title = "A";
  plain.type = ColumnType::kInteger;
  EXPECT_EQ((*cols)[0], plain);
  // Nulls are "not given", as for width and scale.
  auto nulls = Wire(R"([{"key":"a","title":"A","type":"INTEGER","merge":null,"labels":null,
                         "total":null,"style":null,"highlight":null,"mergeWithin":null}])");
  ASSERT_TRUE(nulls.ok()) << nulls.status().ToString();
  EXPECT_EQ((*nulls)[0], plain);
}

TEST(ParseWireColumns, LanguageObjectsFollowTheAgreedRule) {
  const char* text = R"([{"key":"s","type":"STRING",
      "title":{"zh-CN":["订单","状态"],"en":["Order","Status"],"ja":"状態"},
      "labels":{"PAID":{"zh-CN":"已支付","en":"Paid"},"NEW":"新建"}}])";
  auto title = [&](std::string_view locale, std::string_view fallback) {
    auto cols = Wire(text, locale, fallback);
    EXPECT_TRUE(cols.ok()) << cols.status().ToString();
    const Column& c = (*cols)[0];
    std::string path;
    for (const auto& g : c.title_groups) path += g + "/";
    return path + c.title + "|" + c.labels[1].second + "|" + c.labels[0].second;
  };
  EXPECT_EQ(title("en", "zh-CN"), "Order/Status|Paid|新建");
  EXPECT_EQ(title("ZH-cn", "en"), "订单/状态|已支付|新建");      // exact, case-insensitive
  EXPECT_EQ(title("en-US", "zh-CN"), "Order/Status|Paid|新建");  // primary subtag
  EXPECT_EQ(title("fr", "zh-CN"), "订单/状态|已支付|新建");      // the default language
  EXPECT_EQ(title("fr-CA", "zh"), "Order/Status|Paid|新建");     // the first entry: "en"
  EXPECT_EQ(title("ja", ""), "状態|Paid|新建");                  // a one-level title
  EXPECT_EQ(title("", ""), "Order/Status|Paid|新建");
}

TEST(ParseWireColumns, RefusalsNameTheColumnKey) {
  auto refused = [](const char* text) {
    auto cols = Wire(text);
    EXPECT_FALSE(cols.ok()) << text;
    return cols.ok() ? std::string() : cols.status().message();
  };
  auto has = [&](const char* text, const char* want) {
    const std::string message = refused(text);
    EXPECT_NE(message.find("'st'"), std::string::npos) << message;
    EXPECT_NE(message.find(want), std::string::npos) << message;
  };
  has(R"([{"key":"st","type":"STRING","labels":{"PAID":3}}])", "not a string");
  has(R"([{"key":"st","type":"STRING","labels":{"PAID":{"en":true}}}])", "not a string");
  has(R"([{"key":"st","type":"STRING","labels":["PAID"]}])", "labels is not an object");
  has(R"([{"key":"st","type":"STRING","labelMissing":"DROP"}])", "KEEP, BLANK, FAIL");
  has(R"([{"key":"st","type":"STRING","merge":"ALWAYS"}])", "SAME_VALUE");
  has(R"([{"key":"st","type":"STRING","merge":true}])", "merge is not a string");
  has(R"([{"key":"st","type":"INTEGER","total":"MEDIAN"}])", "SUM, COUNT, MIN, MAX, AVG");
  has(R"([{"key":"st","type":"STRING","total":"SUM"}])", "total SUM on a STRING column");
  has(R"([{"key":"st","type":"STRING","style":{"align":"JUSTIFY"}}])", "LEFT, CENTER, RIGHT");
  has(R"([{"key":"st","type":"STRING","style":{"wrap":"yes"}}])", "wrap is not true or false");
  has(R"([{"key":"st","type":"STRING","style":{"headerFill":"red"}}])", "is not #RRGGBB");
  has(R"([{"key":"st","type":"STRING","style":[]}])", "style is not an object");
  has(R"([{"key":"st","type":"STRING","highlight":{"op":"LIKE","values":["a"],"fill":"#000000"}}])",
      "EQUALS, IN, GREATER, LESS");
  has(R"([{"key":"st","type":"STRING","highlight":{"op":"IN","values":"a","fill":"#000000"}}])",
      "values is not an array");
  has(R"([{"key":"st","type":"STRING","highlight":{"op":"IN","values":[[1]],"fill":"#000000"}}])",
      "highlight value is not");
  has(R"([{"key":"st","type":"STRING","title":[]}])", "title has no level");
  has(R"([{"key":"st","type":"STRING","title":["a","b","c","d","e","f"]}])",
      "title has 6 levels, at most 5");
  has(R"([{"key":"st","type":"STRING","title":["a",2]}])", "title level 2 is not a string");
  has(R"([{"key":"st","type":"STRING","title":7}])", "title is not a string");
  has(R"([{"key":"st","type":"STRING","title":{}}])", "empty language object");
  has(R"([{"key":"st","type":"STRING","title":{"not a tag":"x"}}])", "not a language tag");
  has(R"([{"key":"st","type":"STRING","title":{"en":{"en":"x"}}}])", "title is not a string");
  has(R"([{"key":"a","type":"STRING"},{"key":"st","type":"STRING","merge":"SAME_VALUE",
        "mergeWithin":"nope"}])",
      "mergeWithin 'nope' is not a column");
  has(R"([{"key":"st","type":"STRING","mergeWithin":5}])", "mergeWithin is not a string");
}

}  // namespace
}  // namespace export_center::task
