// The one calendar (common/civil_day.h): which days exist, their text and
// their day numbers.

#include "common/civil_day.h"

#include <gtest/gtest.h>

namespace export_center {
namespace {

TEST(CivilDay, FromYmdRefusesDaysThatDoNotExist) {
  EXPECT_TRUE(CivilDay::FromYmd(2024, 2, 29));   // divisible by 4
  EXPECT_TRUE(CivilDay::FromYmd(2000, 2, 29));   // divisible by 400
  EXPECT_FALSE(CivilDay::FromYmd(1900, 2, 29));  // divisible by 100 only
  EXPECT_FALSE(CivilDay::FromYmd(2023, 2, 29));
  EXPECT_FALSE(CivilDay::FromYmd(2023, 2, 31));
  EXPECT_FALSE(CivilDay::FromYmd(2023, 4, 31));
  EXPECT_TRUE(CivilDay::FromYmd(2023, 12, 31));
  EXPECT_FALSE(CivilDay::FromYmd(2023, 13, 1));
  EXPECT_FALSE(CivilDay::FromYmd(2023, 0, 1));
  EXPECT_FALSE(CivilDay::FromYmd(2023, 1, 0));
  EXPECT_TRUE(CivilDay::FromYmd(1, 1, 1));
  EXPECT_TRUE(CivilDay::FromYmd(9999, 12, 31));
  EXPECT_FALSE(CivilDay::FromYmd(0, 12, 31));
  EXPECT_FALSE(CivilDay::FromYmd(10000, 1, 1));
}

TEST(CivilDay, ParseIsExactlyYyyyMmDd) {
  auto d = CivilDay::Parse("2024-02-29");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->year(), 2024);
  EXPECT_EQ(d->month(), 2);
  EXPECT_EQ(d->day(), 29);
  for (const char* bad : {"2023-02-31", "2023-02-29", "0000-01-01", "2024-1-01", "2024-01-1",
                          "24-01-01", "2024/01/01", "20240101", "+024-01-01", "2024-01-01 ",
                          "2024-01-01T00:00", "２０２４-01-01", ""}) {
    EXPECT_FALSE(CivilDay::Parse(bad)) << bad;
  }
  auto prefix = CivilDay::ParsePrefix("2024-02-29 10:00:00");
  ASSERT_TRUE(prefix);
  EXPECT_EQ(prefix->ToString(), "2024-02-29");
  EXPECT_FALSE(CivilDay::ParsePrefix("2023-02-31 10:00:00"));
}

TEST(CivilDay, DaysFromTheEpoch) {
  EXPECT_EQ(CivilDay().days(), 0);
  EXPECT_EQ(CivilDay::Parse("1970-01-01")->days(), 0);
  EXPECT_EQ(CivilDay::Parse("2000-03-01")->days(), 11017);
  EXPECT_EQ(CivilDay::Parse("1969-12-31")->days(), -1);
  EXPECT_EQ(CivilDay::Parse("2024-01-01")->days(), 19723);
  EXPECT_EQ(CivilDay::Parse("1899-12-30")->days(), -25569);  // Excel's day 0
  EXPECT_EQ(CivilDay::FromDays(-1)->ToString(), "1969-12-31");
  EXPECT_FALSE(CivilDay::FromDays(CivilDay::Parse("0001-01-01")->days() - 1));
  EXPECT_FALSE(CivilDay::FromDays(CivilDay::Parse("9999-12-31")->days() + 1));
  EXPECT_EQ(CivilDay::FromDays(CivilDay::Parse("9999-12-31")->days())->ToString(), "9999-12-31");
}

TEST(CivilDay, EveryDayRoundTrips) {
  const int64_t first = CivilDay::Parse("0001-01-01")->days();
  const int64_t last = CivilDay::Parse("9999-12-31")->days();
  int64_t count = 0;
  for (int64_t days = first; days <= last; ++days, ++count) {
    auto d = CivilDay::FromDays(days);
    ASSERT_TRUE(d) << days;
    ASSERT_EQ(d->days(), days);
    const std::string text = d->ToString();
    ASSERT_EQ(CivilDay::Parse(text), d) << text;
  }
  EXPECT_EQ(count, 3652059);  // 9999 years of 365.2425 days
}

TEST(CivilArithmetic, AgreesOutsideTheWritableYears) {
  for (int64_t days = -800000; days <= 3000000; days += 97) {
    int64_t y;
    int m, d;
    civil::DaysToYmd(days, &y, &m, &d);
    ASSERT_EQ(civil::DaysFromYmd(y, m, d), days);
  }
  EXPECT_EQ(civil::DaysInMonth(2024, 2), 29);
  EXPECT_EQ(civil::DaysInMonth(2100, 2), 28);
  EXPECT_TRUE(civil::IsLeapYear(2400));
}

}  // namespace
}  // namespace export_center
