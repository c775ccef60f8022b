#include "task/column_options.h"

#include <gtest/gtest.h>

#include <functional>

namespace export_center::task {
namespace {

std::vector<Column> Base() {
  return {{.key = "order", .title = "订单号"},
          {.key = "day", .title = "日期"},
          {.key = "status", .title = "状态"},
          {.key = "amount", .title = "金额", .type = ColumnType::kDecimal},
          {.key = "qty", .title = "数量", .type = ColumnType::kInteger},
          {.key = "at", .title = "时间", .type = ColumnType::kDateTime}};
}

// Applies `edit` to Base() and expects ValidateColumns to refuse it with a
// message naming `key` and containing `why`.
void ExpectRefused(const std::function<void(std::vector<Column>&)>& edit, const std::string& key,
                   const std::string& why) {
  std::vector<Column> columns = Base();
  edit(columns);
  const Status s = ValidateColumns(columns);
  ASSERT_FALSE(s.ok()) << why;
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'" + key + "'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
}

TEST(ColumnOptions, EveryOptionInBoundsIsAccepted) {
  std::vector<Column> c = Base();
  c[0].title_groups = {"订单", "基本", "编号", "主"};  // 5 levels
  c[0].merge = MergeMode::kSameValue;
  c[1].merge = MergeMode::kSameValue;
  c[1].merge_within = "order";
  c[2].labels = {{"PAID", "已支付"}, {"NEW", "新建"}};
  c[2].label_missing = LabelMissing::kFail;
  c[2].highlight = {.op = HighlightOp::kIn, .values = {"已支付", "新建"}, .fill = "#FFC7CE"};
  c[3].total = TotalKind::kSum;
  c[3].highlight = {.op = HighlightOp::kGreater, .values = {"1000.50"}, .font = "#9c0006"};
  c[3].style = {.header_fill = "#1F4E78", .header_font = "#FFFFFF", .align = Align::kRight};
  c[4].total = TotalKind::kAvg;
  c[4].labels.clear();
  EXPECT_TRUE(ValidateColumns(c).ok()) << ValidateColumns(c).ToString();
  EXPECT_EQ(TitleDepth(c[0]), 5);
  EXPECT_EQ(TitleLevel(c[0], 0), "订单");
  EXPECT_EQ(TitleLevel(c[0], 4), "订单号");
  EXPECT_EQ(TitleDepth(c[5]), 1);
}

TEST(ColumnOptions, TitlePathsDeeperThanFiveOrWithEmptyLevelsAreRefused) {
  ExpectRefused(
      [](auto& c) {
        c[1].title_groups = {"a", "b", "c", "d", "e"};
      },
      "day", "title has 6 levels, at most 5");
  ExpectRefused([](auto& c) { c[1].title_groups = {"a", ""}; }, "day", "empty level");
  ExpectRefused([](auto& c) { c[1].title_groups = {std::string(256, 'x')}; }, "day",
                "over 255 bytes");
}

TEST(ColumnOptions, MergeParentMustBeAnEarlierColumn) {
  ExpectRefused(
      [](auto& c) {
        c[1].merge = MergeMode::kSameValue;
        c[1].merge_within = "nope";
      },
      "day", "mergeWithin 'nope' is not a column");
  ExpectRefused(
      [](auto& c) {
        c[1].merge = MergeMode::kSameValue;
        c[1].merge_within = "status";
      },
      "day", "must name an earlier column");
  ExpectRefused(
      [](auto& c) {
        c[1].merge = MergeMode::kSameValue;
        c[1].merge_within = "day";
      },
      "day", "must name an earlier column");
  ExpectRefused([](auto& c) { c[1].merge_within = "order"; }, "day",
                "mergeWithin without merge SAME_VALUE");
}

TEST(ColumnOptions, LabelMapsAreBounded) {
  ExpectRefused(
      [](auto& c) {
        for (int i = 0; i < 1001; ++i) c[2].labels.emplace_back(std::to_string(i), "x");
      },
      "status", "1001 labels exceed the limit of 1000");
  ExpectRefused(
      [](auto& c) {
        for (int i = 0; i < 100; ++i)
          c[2].labels.emplace_back(std::to_string(i), std::string(700, 'x'));
      },
      "status", "over the limit of 65536");
  ExpectRefused(
      [](auto& c) {
        c[2].labels = {{"A", std::string(1025, 'x')}};
      },
      "status", "over 1024 bytes");
  ExpectRefused(
      [](auto& c) {
        c[2].labels = {{std::string(257, 'k'), "x"}};
      },
      "status", "over 256 bytes");
  ExpectRefused(
      [](auto& c) {
        c[2].labels = {{"A", "x"}, {"A", "y"}};
      },
      "status", "labelled twice");
  ExpectRefused([](auto& c) { c[2].labels = {{"", "x"}}; }, "status", "empty value");
  ExpectRefused([](auto& c) { c[5].labels = {{"A", "x"}}; }, "at", "labels on a DATETIME column");
}

TEST(ColumnOptions, TotalsOnlyOnPlainNumericColumns) {
  ExpectRefused([](auto& c) { c[2].total = TotalKind::kSum; }, "status",
                "total SUM on a STRING column");
  ExpectRefused([](auto& c) { c[5].total = TotalKind::kMax; }, "at", "on a DATETIME column");
  ExpectRefused(
      [](auto& c) {
        c[4].total = TotalKind::kCount;
        c[4].labels = {{"1", "一"}};
      },
      "qty", "on a labelled column");
  ExpectRefused(
      [](auto& c) {
        c[3].total = TotalKind::kSum;
        c[3].merge = MergeMode::kSameValue;
      },
      "amount", "on a merged column");
}

TEST(ColumnOptions, ColoursMustBeHashRrggbb) {
  ExpectRefused([](auto& c) { c[0].style.header_fill = "red"; }, "order", "'red' is not #RRGGBB");
  ExpectRefused([](auto& c) { c[0].style.header_font = "#12345"; }, "order", "is not #RRGGBB");
  ExpectRefused([](auto& c) { c[0].style.header_fill = "#GGGGGG"; }, "order", "is not #RRGGBB");
  ExpectRefused(
      [](auto& c) {
        c[0].highlight = {.op = HighlightOp::kEquals, .values = {"x"}, .fill = "#FF00001"};
      },
      "order", "is not #RRGGBB");
}

TEST(ColumnOptions, HighlightsAreChecked) {
  ExpectRefused([](auto& c) { c[0].highlight = {.op = HighlightOp::kEquals, .values = {"x"}}; },
                "order", "neither a fill nor a font colour");
  ExpectRefused([](auto& c) { c[0].highlight = {.op = HighlightOp::kEquals, .fill = "#FF0000"}; },
                "order", "has no value");
  ExpectRefused(
      [](auto& c) {
        c[0].highlight = {.op = HighlightOp::kEquals, .values = {"a", "b"}, .fill = "#FF0000"};
      },
      "order", "exactly one value");
  ExpectRefused(
      [](auto& c) {
        c[0].highlight = {.op = HighlightOp::kGreater, .values = {"1"}, .fill = "#FF0000"};
      },
      "order", "not numeric");
  ExpectRefused(
      [](auto& c) {
        c[3].highlight = {.op = HighlightOp::kLess, .values = {"1e5"}, .fill = "#FF0000"};
      },
      "amount", "'1e5' is not a number");
  ExpectRefused(
      [](auto& c) {
        c[5].highlight = {.op = HighlightOp::kEquals, .values = {"1"}, .fill = "#FF0000"};
      },
      "at", "highlight on a DATETIME column");
}

TEST(ColumnOptions, EnumNamesRoundTrip) {
  EXPECT_EQ(ParseMergeMode("SAME_VALUE"), MergeMode::kSameValue);
  EXPECT_EQ(ParseLabelMissing("BLANK"), LabelMissing::kBlank);
  EXPECT_EQ(ParseTotalKind("AVG"), TotalKind::kAvg);
  EXPECT_EQ(ParseTotalKind("avg"), std::nullopt);
  EXPECT_EQ(ToString(TotalKind::kCount), "COUNT");
  EXPECT_EQ(ToString(LabelMissing::kFail), "FAIL");
}

TEST(ValueLabeler, KeepBlankAndFailNameTheRowColumnAndValue) {
  std::vector<Column> c = Base();
  c[0].labels = {{"PAID", "已支付"}};  // KEEP
  c[2].labels = {{"NEW", "新建"}};
  c[2].label_missing = LabelMissing::kBlank;
  c[4].labels = {{"1", "一"}, {"2", "二"}};
  c[4].label_missing = LabelMissing::kFail;
  c[3].labels = {{"12.50", "十二块五"}};
  ValueLabeler labeler(c);
  ASSERT_FALSE(labeler.empty());
  Row row = {std::string("PAID"), std::string("d"), std::string("GONE"),
             Decimal{"12.50"},    int64_t{2},       DateTime{0}};
  ASSERT_TRUE(labeler.Apply(1, &row).ok());
  EXPECT_EQ(std::get<std::string>(row[0]), "已支付");
  EXPECT_EQ(std::get<std::string>(row[1]), "d");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(row[2]));
  EXPECT_EQ(std::get<std::string>(row[3]), "十二块五");
  EXPECT_EQ(std::get<std::string>(row[4]), "二");

  Row kept = {std::string("OTHER"), std::monostate{}, std::monostate{},
              std::monostate{},     std::monostate{}, std::monostate{}};
  ASSERT_TRUE(labeler.Apply(2, &kept).ok());
  EXPECT_EQ(std::get<std::string>(kept[0]), "OTHER");            // KEEP
  EXPECT_TRUE(std::holds_alternative<std::monostate>(kept[4]));  // null is never looked up

  Row bad = {std::monostate{}, std::monostate{}, std::monostate{},
             std::monostate{}, int64_t{7},       std::monostate{}};
  const Status s = labeler.Apply(42, &bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "row 42, column 'qty': value '7' has no label");
  // The value is recorded as quoted, so governance can withhold it (issue 43).
  ASSERT_TRUE(s.quoted_value().has_value());
  EXPECT_EQ(s.quoted_value()->column, "qty");
  EXPECT_EQ(s.WithoutQuotedValue("[withheld]").message(),
            "row 42, column 'qty': value '[withheld]' has no label");

  EXPECT_TRUE(ValueLabeler(Base()).empty());
  EXPECT_FALSE(HasLabels(Base()));
  EXPECT_TRUE(HasLabels(c));
}

TEST(ValueLabeler, BooleansUseTrueAndFalse) {
  std::vector<Column> c = {{.key = "ok", .title = "ok", .type = ColumnType::kBoolean}};
  c[0].labels = {{"true", "是"}, {"false", "否"}};
  ValueLabeler labeler(c);
  Row row = {false};
  ASSERT_TRUE(labeler.Apply(1, &row).ok());
  EXPECT_EQ(std::get<std::string>(row[0]), "否");
}

TEST(ApplyLabelOverrides, MergesByKeyTheDefinitionWinning) {
  std::vector<Column> c = Base();
  c[2].labels = {{"PAID", "paid"}, {"NEW", "新建"}};
  const std::vector<LabelOverride> overrides = {
      {.key = "status",
       .labels = {{"PAID", "已支付"}, {"DONE", "完成"}},
       .label_missing = LabelMissing::kBlank},
      {.key = "qty", .labels = {{"1", "一"}}, .label_missing = std::nullopt}};
  ASSERT_TRUE(ApplyLabelOverrides(overrides, &c).ok());
  EXPECT_EQ(c[2].labels, (std::vector<std::pair<std::string, std::string>>{
                             {"PAID", "已支付"}, {"NEW", "新建"}, {"DONE", "完成"}}));
  EXPECT_EQ(c[2].label_missing, LabelMissing::kBlank);
  EXPECT_EQ(c[4].labels.size(), 1u);
  EXPECT_EQ(c[4].label_missing, LabelMissing::kKeep);

  std::vector<Column> missing = Base();
  Status s = ApplyLabelOverrides({{.key = "nope", .labels = {{"a", "b"}}}}, &missing);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("column 'nope'"), std::string::npos) << s.message();
  // Merged options are validated again: a date column cannot carry labels.
  std::vector<Column> dated = Base();
  s = ApplyLabelOverrides({{.key = "at", .labels = {{"a", "b"}}}}, &dated);
  EXPECT_NE(s.message().find("column 'at': labels on a DATETIME column"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace export_center::task
