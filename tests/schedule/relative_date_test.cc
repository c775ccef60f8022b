#include "schedule/relative_date.h"

#include <gtest/gtest.h>

#include <chrono>

#include "schedule/schedule.h"

namespace export_center::schedule {
namespace {

int64_t LocalMs(const cctz::time_zone& zone, int y, int mo, int d, int h) {
  auto t = cctz::convert(cctz::civil_second(y, mo, d, h, 0, 0), zone);
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string Resolve(std::string_view range, RangeBound bound, int64_t run_ms,
                    const cctz::time_zone& zone) {
  return FormatDay(ResolveRelativeDate({*ParseRelativeRange(range), bound}, run_ms, zone));
}

TEST(RelativeDateTest, RangesOnAMondayInMarch) {
  cctz::time_zone shanghai = *LoadZone("Asia/Shanghai");
  int64_t run = LocalMs(shanghai, 2024, 3, 4, 9);  // Monday; 2024 is a leap year
  auto both = [&](std::string_view range) {
    return Resolve(range, RangeBound::kStart, run, shanghai) + ".." +
           Resolve(range, RangeBound::kEnd, run, shanghai);
  };
  EXPECT_EQ(both("today"), "2024-03-04..2024-03-04");
  EXPECT_EQ(both("yesterday"), "2024-03-03..2024-03-03");
  EXPECT_EQ(both("last-7-days"), "2024-02-26..2024-03-03");
  EXPECT_EQ(both("last-30-days"), "2024-02-03..2024-03-03");
  EXPECT_EQ(both("last-week"), "2024-02-26..2024-03-03");
  EXPECT_EQ(both("last-month"), "2024-02-01..2024-02-29");
  EXPECT_EQ(both("this-month-to-date"), "2024-03-01..2024-03-04");
}

TEST(RelativeDateTest, LastWeekOnASundayAndLastMonthInJanuary) {
  cctz::time_zone shanghai = *LoadZone("Asia/Shanghai");
  int64_t sunday = LocalMs(shanghai, 2026, 12, 6, 9);
  EXPECT_EQ(Resolve("last-week", RangeBound::kStart, sunday, shanghai), "2026-11-23");
  EXPECT_EQ(Resolve("last-week", RangeBound::kEnd, sunday, shanghai), "2026-11-29");
  int64_t january = LocalMs(shanghai, 2027, 1, 1, 0);
  EXPECT_EQ(Resolve("last-month", RangeBound::kStart, january, shanghai), "2026-12-01");
  EXPECT_EQ(Resolve("last-month", RangeBound::kEnd, january, shanghai), "2026-12-31");
}

TEST(RelativeDateTest, TheRunsZoneDecidesWhatTodayIs) {
  cctz::time_zone shanghai = *LoadZone("Asia/Shanghai");
  cctz::time_zone new_york = *LoadZone("America/New_York");
  // 2026-12-07 01:00 in Shanghai is still 2026-12-06 in New York.
  int64_t run = LocalMs(shanghai, 2026, 12, 7, 1);
  EXPECT_EQ(Resolve("today", RangeBound::kStart, run, shanghai), "2026-12-07");
  EXPECT_EQ(Resolve("today", RangeBound::kStart, run, new_york), "2026-12-06");
}

TEST(RelativeDateTest, RefusesUnknownNames) {
  auto range = ParseRelativeRange("last-fortnight");
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.status().message().find("one of today, yesterday"), std::string::npos);
  EXPECT_FALSE(ParseRangeBound("middle").ok());
  EXPECT_EQ(RelativeRangeName(RelativeRange::kLastMonth), "last-month");
}

}  // namespace
}  // namespace export_center::schedule
