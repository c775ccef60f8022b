// ColumnPolicySource: the wrapped source's columns and rows come out with the
// policy applied, from the first page on; verdicts pass through.

#include "source/column_policy_source.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace export_center::source {
namespace {

class TwoPageSource : public RowSource {
 public:
  const std::vector<task::Column>& columns() const override { return columns_; }
  SourceFacts facts() const override {
    SourceFacts facts;
    facts.failure_code = "SOME_CODE";
    return facts;
  }
  StatusOr<Page> NextPage() override {
    columns_ = {{"name", "姓名", task::ColumnType::kString, 0, 2, ""},
                {"phone", "手机", task::ColumnType::kString, 0, 2, ""},
                {"salary", "薪资", task::ColumnType::kDecimal, 0, 2, ""}};
    Page page;
    page.rows.push_back({std::string("张三丰"), std::string("13812345678"), task::Decimal{"1.00"}});
    if (pages_ == 0) page.facts.emplace().excel_template = std::make_shared<const std::string>("x");
    page.has_more = ++pages_ < 2;
    return page;
  }

 private:
  std::vector<task::Column> columns_;
  int pages_ = 0;
};

task::ColumnPolicy PhoneMaskedSalaryOmitted() {
  task::ColumnDecision phone{"phone", task::ColumnAction::kMask, 3, 4, 64};
  task::ColumnDecision salary{"salary", task::ColumnAction::kOmit, 0, 0, 64};
  return task::ColumnPolicy{{phone, salary}};
}

TEST(ColumnPolicySource, AppliesThePolicyToEveryPage) {
  auto source = WithColumnPolicy(std::make_unique<TwoPageSource>(), PhoneMaskedSalaryOmitted());
  for (int i = 0; i < 2; ++i) {
    auto page = source->NextPage();
    ASSERT_TRUE(page.ok());
    ASSERT_EQ(source->columns().size(), 2u);
    EXPECT_EQ(source->columns()[1].key, "phone");
    ASSERT_EQ(page->rows.size(), 1u);
    ASSERT_EQ(page->rows[0].size(), 2u);
    EXPECT_EQ(std::get<std::string>(page->rows[0][0]), "张三丰");
    EXPECT_EQ(std::get<std::string>(page->rows[0][1]), "138****5678");
    EXPECT_EQ(page->has_more, i == 0);
    // The first page's facts pass the policy with the page.
    ASSERT_EQ(page->facts.has_value(), i == 0);
    if (i == 0) {
      EXPECT_EQ(*page->facts->excel_template, "x");
    }
  }
  EXPECT_EQ(source->facts().failure_code, "SOME_CODE");
}

TEST(ColumnPolicySource, AnEmptyPolicyLeavesTheSourceAlone) {
  auto inner = std::make_unique<TwoPageSource>();
  RowSource* raw = inner.get();
  EXPECT_EQ(WithColumnPolicy(std::move(inner), task::ColumnPolicy{}).get(), raw);
}

// Fails its first page with what a route says of a cell that does not parse:
// task::ParseWireValue's message, put in context as both routes do.
class BadCellSource : public RowSource {
 public:
  explicit BadCellSource(task::Column column) : column_(std::move(column)) {}
  const std::vector<task::Column>& columns() const override { return columns_; }
  StatusOr<Page> NextPage() override {
    auto cell = task::ParseWireValue(column_, nlohmann::json("SECRET-9876543"));
    EXPECT_FALSE(cell.ok());
    return cell.status().WithContext("row 3");
  }

 private:
  task::Column column_;
  std::vector<task::Column> columns_;
};

// docs/configuration.md#column-governance-columns: a message about a governed
// column names the column, never its value.
TEST(ColumnPolicySource, AFailureQuotingAGovernedValueNamesOnlyTheColumn) {
  for (const char* governed : {"salary", "phone"}) {  // omitted, masked
    task::Column column{governed, governed, task::ColumnType::kDecimal, 0, 2, ""};
    auto source =
        WithColumnPolicy(std::make_unique<BadCellSource>(column), PhoneMaskedSalaryOmitted());
    auto page = source->NextPage();
    ASSERT_FALSE(page.ok());
    const std::string& message = page.status().message();
    EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(message.find("SECRET"), std::string::npos) << message;
    EXPECT_EQ(message, "row 3: column '" + std::string(governed) + "' (DECIMAL): value " +
                           kWithheldValue + " is not a decimal");
  }
  // A column the policy does not govern keeps its value in the message: the
  // requester may see it, and needs it to ask the business team.
  task::Column plain{"amount", "amount", task::ColumnType::kDecimal, 0, 2, ""};
  auto source =
      WithColumnPolicy(std::make_unique<BadCellSource>(plain), PhoneMaskedSalaryOmitted());
  auto page = source->NextPage();
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("\"SECRET-9876543\""), std::string::npos)
      << page.status().message();
}

}  // namespace
}  // namespace export_center::source
