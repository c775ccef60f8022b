// LabellingSource: labels applied to every page before column governance
// masks them (source::WithLabels inside source::WithColumnPolicy, as
// attempt::OpenGovernedSource stacks them), the definition's labels merged
// over the source's, and a FAIL message of a governed column without its value.

#include "source/labelling_source.h"

#include <gtest/gtest.h>

#include "source/column_policy_source.h"

namespace export_center::source {
namespace {

// Two pages of orders; the status column carries the source's labels.
class OrderSource : public RowSource {
 public:
  explicit OrderSource(std::string second_status = "NEW")
      : second_status_(std::move(second_status)) {}
  const std::vector<task::Column>& columns() const override { return columns_; }
  StatusOr<Page> NextPage() override {
    columns_ = {{.key = "no", .title = "单号"},
                {.key = "status", .title = "状态"},
                {.key = "channel", .title = "渠道"}};
    columns_[1].labels = {{"PAID", "已支付"}, {"NEW", "新建"}};
    columns_[1].label_missing = task::LabelMissing::kFail;
    columns_[1].merge = task::MergeMode::kSameValue;
    Page page;
    page.rows.push_back({std::string("SO1"), std::string(pages_ == 0 ? "PAID" : second_status_),
                         std::string("WEB")});
    page.has_more = ++pages_ < 2;
    return page;
  }

 private:
  std::string second_status_;
  std::vector<task::Column> columns_;
  int pages_ = 0;
};

std::string Text(const task::CellValue& cell) { return std::get<std::string>(cell); }

TEST(LabellingSource, LabelsEveryPageWithTheDefinitionsLabelsMerged) {
  auto source = WithLabels(std::make_unique<OrderSource>(),
                           {{.key = "channel", .labels = {{"WEB", "网站"}}, .label_missing = {}},
                            {.key = "status", .labels = {{"NEW", "待支付"}}, .label_missing = {}}});
  auto first = source->NextPage();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(Text(first->rows[0][1]), "已支付");
  EXPECT_EQ(Text(first->rows[0][2]), "网站");
  auto second = source->NextPage();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(Text(second->rows[0][1]), "待支付");  // the definition's label wins
  EXPECT_EQ(source->columns()[2].labels.size(), 1u);
}

TEST(LabellingSource, AGovernedLabelIsMaskedAfterItsLabel) {
  task::ColumnDecision status{"status", task::ColumnAction::kMask, 1, 0, 64};
  auto source = WithColumnPolicy(WithLabels(std::make_unique<OrderSource>(), {}),
                                 task::ColumnPolicy{{status}});
  auto page = source->NextPage();
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Text(page->rows[0][1]), "已**");  // the label masked, not "P***"
  EXPECT_EQ(source->columns()[1].type, task::ColumnType::kString);
}

TEST(LabellingSource, AFailLabelOfAGovernedColumnDoesNotQuoteTheValue) {
  auto plain = WithLabels(std::make_unique<OrderSource>("REFUND-SECRET"), {});
  ASSERT_TRUE(plain->NextPage().ok());
  Status s = plain->NextPage().status();
  EXPECT_EQ(s.message(), "row 2, column 'status': value 'REFUND-SECRET' has no label");

  task::ColumnDecision status{"status", task::ColumnAction::kMask, 1, 0, 64};
  auto governed = WithColumnPolicy(WithLabels(std::make_unique<OrderSource>("REFUND-SECRET"), {}),
                                   task::ColumnPolicy{{status}});
  ASSERT_TRUE(governed->NextPage().ok());
  s = governed->NextPage().status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            std::string("row 2, column 'status': value '") + kWithheldValue + "' has no label");
}

TEST(LabellingSource, ADefinitionLabelForAnUnknownColumnFailsNamingIt) {
  auto source =
      WithLabels(std::make_unique<OrderSource>(), {{.key = "ghost", .labels = {{"a", "b"}}}});
  Status s = source->NextPage().status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("column 'ghost'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace export_center::source
