// The C++ SDK's column options on the wire: what ColumnsToJson sends is what
// the center's parser (task::ParseWireColumns) reads back, option for option,
// and a column without options is sent exactly as before.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sdk/wire_values.h"
#include "task/table.h"

namespace export_center {
namespace {

TEST(SdkColumnOptions, APlainColumnIsSentAsBefore) {
  const std::vector<sdk::Column> plain = {
      {"id", "编号", sdk::ColumnType::kInteger, 10},
      {"amount", "金额", sdk::ColumnType::kDecimal, 12, 2, "#,##0.00"}};
  EXPECT_EQ(sdk::ColumnsToJson(plain).dump(),
            R"([{"key":"id","title":"编号","type":"INTEGER","width":10},)"
            R"({"format":"#,##0.00","key":"amount","scale":2,"title":"金额","type":"DECIMAL",)"
            R"("width":12}])");
}

TEST(SdkColumnOptions, EveryOptionReachesTheCentersParser) {
  sdk::Column no{"orderNo", "单号", sdk::ColumnType::kString, 16};
  no.title_groups = {"订单"};
  no.merge = sdk::Merge::kSameValue;
  sdk::Column day{"day", "下单日", sdk::ColumnType::kDate, 12};
  day.title_groups = {"订单"};
  day.merge = sdk::Merge::kSameValue;
  day.merge_within = "orderNo";
  sdk::Column status{"status", "状态", sdk::ColumnType::kString, 10};
  status.titles_by_language = {{"zh-CN", {"状态"}}, {"en", {"Status"}}};
  status.labels = {{"PAID", {"", {{"zh-CN", "已支付"}, {"en", "Paid"}}}}, {"NEW", {"新建", {}}}};
  status.label_missing = sdk::LabelMissing::kFail;
  status.style = {"#FFEEDD", "#112233", sdk::Align::kCenter, true};
  status.highlight = {sdk::HighlightOp::kEquals, {"Paid"}, "#C6EFCE", ""};
  sdk::Column amount{"amount", "金额", sdk::ColumnType::kDecimal, 12, 2};
  amount.total = sdk::Total::kSum;

  auto parsed =
      task::ParseWireColumns(sdk::ColumnsToJson({no, day, status, amount}), "en-US", "zh-CN");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const std::vector<task::Column>& c = *parsed;
  EXPECT_EQ(c[0].title_groups, std::vector<std::string>{"订单"});
  EXPECT_EQ(c[0].merge, task::MergeMode::kSameValue);
  EXPECT_EQ(c[1].merge_within, "orderNo");
  EXPECT_EQ(c[2].title, "Status");
  EXPECT_EQ(c[2].labels,
            (std::vector<std::pair<std::string, std::string>>{{"NEW", "新建"}, {"PAID", "Paid"}}));
  EXPECT_EQ(c[2].label_missing, task::LabelMissing::kFail);
  EXPECT_EQ(c[2].style.align, task::Align::kCenter);
  EXPECT_TRUE(c[2].style.wrap);
  EXPECT_EQ(c[2].style.header_fill, "#FFEEDD");
  EXPECT_EQ(c[2].highlight.op, task::HighlightOp::kEquals);
  EXPECT_EQ(c[2].highlight.fill, "#C6EFCE");
  EXPECT_EQ(c[3].total, task::TotalKind::kSum);
}

}  // namespace
}  // namespace export_center
