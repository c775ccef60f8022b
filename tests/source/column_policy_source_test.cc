// ColumnPolicySource: the wrapped source's columns and rows come out with the
// policy applied, from the first page on; verdicts pass through.

#include "source/column_policy_source.h"

#include <gtest/gtest.h>

namespace export_center::source {
namespace {

class TwoPageSource : public RowSource {
 public:
  const std::vector<task::Column>& columns() const override { return columns_; }
  std::optional<std::string> failure_code() const override { return "SOME_CODE"; }
  StatusOr<Page> NextPage() override {
    columns_ = {{"name", "姓名", task::ColumnType::kString, 0, 2, ""},
                {"phone", "手机", task::ColumnType::kString, 0, 2, ""},
                {"salary", "薪资", task::ColumnType::kDecimal, 0, 2, ""}};
    Page page;
    page.rows.push_back({std::string("张三丰"), std::string("13812345678"), task::Decimal{"1.00"}});
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
  }
  EXPECT_EQ(source->failure_code(), "SOME_CODE");
}

TEST(ColumnPolicySource, AnEmptyPolicyLeavesTheSourceAlone) {
  auto inner = std::make_unique<TwoPageSource>();
  RowSource* raw = inner.get();
  EXPECT_EQ(WithColumnPolicy(std::move(inner), task::ColumnPolicy{}).get(), raw);
}

}  // namespace
}  // namespace export_center::source
