#include "render/column_total.h"

#include <gtest/gtest.h>

namespace export_center::render::internal {
namespace {

using task::CellValue;
using task::Decimal;
using task::TotalKind;

std::optional<std::string> Total(TotalKind kind, int scale, const std::vector<CellValue>& values) {
  ColumnTotal total(kind, scale);
  for (const CellValue& v : values) total.Add(v);
  return total.Text();
}

TEST(ColumnTotal, SumIsExactDecimalArithmetic) {
  EXPECT_EQ(Total(TotalKind::kSum, 2, {Decimal{"0.10"}, Decimal{"0.20"}}), "0.30");
  EXPECT_EQ(Total(TotalKind::kSum, 2, {Decimal{"1.5"}, Decimal{"2.25"}, Decimal{"-10"}}), "-6.25");
  // More digits than the scale stay: the cached value equals what Excel sums.
  EXPECT_EQ(Total(TotalKind::kSum, 2, {Decimal{"0.125"}, Decimal{"1.00"}}), "1.125");
  EXPECT_EQ(Total(TotalKind::kSum, 0, {int64_t{INT64_MAX}, int64_t{INT64_MAX}}),
            "18446744073709551614");
  EXPECT_EQ(Total(TotalKind::kSum, 2, {}), "0.00");
  // Null and text are skipped, as Excel's SUM skips them.
  EXPECT_EQ(Total(TotalKind::kSum, 0, {int64_t{3}, CellValue{}, std::string("x")}), "3");
}

TEST(ColumnTotal, CountMinMax) {
  const std::vector<CellValue> v = {Decimal{"-3.50"}, CellValue{}, Decimal{"12.5"},
                                    Decimal{"-3.25"}};
  EXPECT_EQ(Total(TotalKind::kCount, 0, v), "3");
  EXPECT_EQ(Total(TotalKind::kMin, 2, v), "-3.50");
  EXPECT_EQ(Total(TotalKind::kMax, 2, v), "12.50");
  EXPECT_EQ(Total(TotalKind::kMax, 0, {int64_t{-7}, int64_t{-9}}), "-7");
}

TEST(ColumnTotal, AverageRoundsHalfAwayFromZero) {
  EXPECT_EQ(Total(TotalKind::kAvg, 2, {Decimal{"0.125"}}), "0.13");
  EXPECT_EQ(Total(TotalKind::kAvg, 2, {Decimal{"-0.125"}}), "-0.13");
  EXPECT_EQ(Total(TotalKind::kAvg, 2, {int64_t{1}, int64_t{2}, int64_t{2}}), "1.67");
  EXPECT_EQ(Total(TotalKind::kAvg, 0, {int64_t{1}, int64_t{2}}), "2");
  EXPECT_EQ(Total(TotalKind::kAvg, 2, {CellValue{}}), std::nullopt);  // #DIV/0! in Excel
}

TEST(ColumnTotal, OverflowLeavesNoCachedValue) {
  const Decimal huge{"99999999999999999999999999999999999.99"};  // 37 digits
  EXPECT_EQ(Total(TotalKind::kSum, 2, {huge}), "99999999999999999999999999999999999.99");
  EXPECT_EQ(Total(TotalKind::kSum, 2, std::vector<CellValue>(20, huge)), std::nullopt);
  EXPECT_EQ(Total(TotalKind::kCount, 2, std::vector<CellValue>(20, huge)), "20");
}

}  // namespace
}  // namespace export_center::render::internal
