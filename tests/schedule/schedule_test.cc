#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/utf8.h"

namespace export_center::schedule {
namespace {

// Epoch ms of a local time in `zone` (UNIQUE times only).
int64_t LocalMs(const char* zone_name, int y, int mo, int d, int h, int mi) {
  cctz::time_zone zone = *LoadZone(zone_name);
  auto t = cctz::convert(cctz::civil_second(y, mo, d, h, mi, 0), zone);
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

int64_t UtcMs(int y, int mo, int d, int h, int mi) { return LocalMs("UTC", y, mo, d, h, mi); }

Schedule Make(const char* cron, const char* zone, bool business_days_only = false) {
  auto parsed = CronExpression::Parse(cron);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  auto schedule = Schedule::Make(*parsed, zone, business_days_only);
  EXPECT_TRUE(schedule.ok()) << schedule.status().ToString();
  return *schedule;
}

TEST(ScheduleTest, MondayAtNineInShanghai) {
  Schedule schedule = Make("0 9 * * MON", "Asia/Shanghai");
  // Sunday 2026-12-06 12:00 Shanghai → Monday 2026-12-07 09:00 Shanghai = 01:00 UTC.
  int64_t next = *schedule.NextAfter(LocalMs("Asia/Shanghai", 2026, 12, 6, 12, 0));
  EXPECT_EQ(next, UtcMs(2026, 12, 7, 1, 0));
  // Strictly after: from the slot itself, the next Monday.
  EXPECT_EQ(*schedule.NextAfter(next), UtcMs(2026, 12, 14, 1, 0));
  EXPECT_EQ(*schedule.NextAfter(next - 1), next);
}

TEST(ScheduleTest, SpringForwardGapFiresOnceAfterTheGap) {
  // America/New_York skips 02:00-03:00 on 2026-03-08.
  Schedule schedule = Make("30 2 * * *", "America/New_York");
  int64_t before = LocalMs("America/New_York", 2026, 3, 7, 12, 0);
  int64_t on_the_day = *schedule.NextAfter(before);
  EXPECT_EQ(on_the_day, LocalMs("America/New_York", 2026, 3, 8, 3, 0));  // 03:00 EDT
  EXPECT_EQ(*schedule.NextAfter(on_the_day), LocalMs("America/New_York", 2026, 3, 9, 2, 30));
  // Two times inside the gap fire once.
  Schedule two = Make("0,30 2 * * *", "America/New_York");
  int64_t first = *two.NextAfter(LocalMs("America/New_York", 2026, 3, 8, 1, 0));
  EXPECT_EQ(first, LocalMs("America/New_York", 2026, 3, 8, 3, 0));
  EXPECT_EQ(*two.NextAfter(first), LocalMs("America/New_York", 2026, 3, 9, 2, 0));
}

TEST(ScheduleTest, FallBackHourFiresOnceAtItsFirstOccurrence) {
  // America/New_York repeats 01:00-02:00 on 2026-11-01 (EDT, then EST).
  Schedule schedule = Make("30 1 * * *", "America/New_York");
  int64_t first = *schedule.NextAfter(LocalMs("America/New_York", 2026, 10, 31, 12, 0));
  EXPECT_EQ(first, UtcMs(2026, 11, 1, 5, 30));  // 01:30 EDT = 05:30 UTC
  // From inside the second 01:xx (06:10 UTC = 01:10 EST) the next is the next day.
  EXPECT_EQ(*schedule.NextAfter(UtcMs(2026, 11, 1, 6, 10)), UtcMs(2026, 11, 2, 6, 30));
  EXPECT_EQ(*schedule.NextAfter(first), UtcMs(2026, 11, 2, 6, 30));
}

TEST(ScheduleTest, HourlyStaysAnHourApartAcrossBothChanges) {
  // A wildcard hour follows elapsed time (Vixie cron): 02:15 does not exist on
  // 2026-03-08 and does not fire; 01:15 happens twice on 2026-11-01 and fires
  // twice. Fixed-time rules would make gaps of 45 min and 2 h, and the
  // minimum interval would refuse every hourly schedule in such a zone.
  Schedule hourly = Make("15 * * * *", "America/New_York");
  EXPECT_TRUE(hourly.CheckFiresAtMost(3600000, UtcMs(2026, 1, 1, 0, 0)).ok());
  int64_t slot = *hourly.NextAfter(UtcMs(2026, 3, 8, 0, 0));
  for (int i = 0; i < 24 * 250; ++i) {
    int64_t next = *hourly.NextAfter(slot);
    ASSERT_EQ(next - slot, 3600000) << "after " << slot;
    slot = next;
  }
  EXPECT_EQ(*hourly.NextAfter(UtcMs(2026, 3, 8, 6, 15)), UtcMs(2026, 3, 8, 7, 15));    // 03:15 EDT
  EXPECT_EQ(*hourly.NextAfter(UtcMs(2026, 11, 1, 5, 15)), UtcMs(2026, 11, 1, 6, 15));  // 01:15 EST
  // LatestIn names the same slots, the repeated hour's second 01:15 included.
  EXPECT_EQ(*hourly.LatestIn(UtcMs(2026, 11, 1, 0, 0), UtcMs(2026, 11, 1, 6, 40)),
            UtcMs(2026, 11, 1, 6, 15));
  EXPECT_EQ(*hourly.LatestIn(UtcMs(2026, 11, 1, 0, 0), UtcMs(2026, 11, 1, 6, 10)),
            UtcMs(2026, 11, 1, 5, 15));
  EXPECT_EQ(*hourly.LatestIn(UtcMs(2026, 3, 8, 0, 0), UtcMs(2026, 3, 8, 7, 10)),
            UtcMs(2026, 3, 8, 6, 15));  // 01:15 EST; nothing fired in the gap
  EXPECT_FALSE(hourly.LatestIn(UtcMs(2026, 11, 1, 6, 15), UtcMs(2026, 11, 1, 7, 10)).has_value());
  // Every half hour: the gap's 02:00 and 02:30 are not fired, nor made up.
  Schedule half = Make("*/30 * * * *", "America/New_York");
  int64_t t = LocalMs("America/New_York", 2026, 3, 8, 1, 0);
  t = *half.NextAfter(t);
  EXPECT_EQ(t, LocalMs("America/New_York", 2026, 3, 8, 1, 30));
  EXPECT_EQ(*half.NextAfter(t), LocalMs("America/New_York", 2026, 3, 8, 3, 0));
}

TEST(ScheduleTest, LatestInAgreesWithNextAfterForWildcardTimes) {
  Schedule schedule = Make("*/20 * * * *", "America/New_York");
  for (int64_t from : {UtcMs(2026, 3, 7, 23, 0), UtcMs(2026, 10, 31, 23, 0)}) {
    int64_t slot = from;
    for (int i = 0; i < 40; ++i) {
      int64_t next = *schedule.NextAfter(slot);
      EXPECT_EQ(*schedule.LatestIn(from, next), next);
      EXPECT_EQ(*schedule.LatestIn(from, next + 60000), next);
      EXPECT_EQ(*schedule.LatestIn(slot, next), next);
      slot = next;
    }
  }
}

TEST(ScheduleTest, DailyAtNineInNewYorkAcrossBothChanges) {
  Schedule schedule = Make("0 9 * * *", "America/New_York");
  int64_t slot = LocalMs("America/New_York", 2026, 3, 6, 9, 0);
  for (int i = 0; i < 250; ++i) {
    int64_t next = *schedule.NextAfter(slot);
    int64_t gap_hours = (next - slot) / 3600000;
    EXPECT_TRUE(gap_hours == 24 || gap_hours == 23 || gap_hours == 25) << gap_hours;
    slot = next;
    cctz::civil_second local = cctz::convert(
        cctz::time_point<cctz::seconds>(cctz::seconds(slot / 1000)), *LoadZone("America/New_York"));
    EXPECT_EQ(local.hour(), 9);
    EXPECT_EQ(local.minute(), 0);
  }
}

TEST(ScheduleTest, BusinessDaysOnlySkipsWeekends) {
  Schedule schedule = Make("0 9 * * *", "Asia/Shanghai", /*business_days_only=*/true);
  // Friday 2026-12-04 09:00 → Monday 2026-12-07 09:00.
  EXPECT_EQ(*schedule.NextAfter(LocalMs("Asia/Shanghai", 2026, 12, 4, 9, 0)),
            LocalMs("Asia/Shanghai", 2026, 12, 7, 9, 0));
}

TEST(ScheduleTest, LatestInGivesOneSlotNotTheBurst) {
  Schedule schedule = Make("0 * * * *", "Asia/Shanghai");
  int64_t last_fired = UtcMs(2026, 12, 6, 0, 0);
  int64_t now = UtcMs(2026, 12, 6, 5, 20);
  EXPECT_EQ(*schedule.LatestIn(last_fired, now), UtcMs(2026, 12, 6, 5, 0));
  EXPECT_EQ(*schedule.LatestIn(last_fired, UtcMs(2026, 12, 6, 5, 0)), UtcMs(2026, 12, 6, 5, 0));
  EXPECT_FALSE(schedule.LatestIn(UtcMs(2026, 12, 6, 5, 0), UtcMs(2026, 12, 6, 5, 59)).has_value());
  EXPECT_FALSE(schedule.LatestIn(now, now).has_value());
  // Weekly: the latest Monday slot in a two-week outage.
  Schedule weekly = Make("0 9 * * MON", "Asia/Shanghai");
  EXPECT_EQ(*weekly.LatestIn(LocalMs("Asia/Shanghai", 2026, 11, 23, 9, 0),
                             LocalMs("Asia/Shanghai", 2026, 12, 9, 0, 0)),
            LocalMs("Asia/Shanghai", 2026, 12, 7, 9, 0));
  EXPECT_FALSE(weekly
                   .LatestIn(LocalMs("Asia/Shanghai", 2026, 12, 7, 9, 0),
                             LocalMs("Asia/Shanghai", 2026, 12, 13, 23, 0))
                   .has_value());
}

TEST(ScheduleTest, LatestInAgreesWithNextAfter) {
  Schedule schedule = Make("15,45 1-3 * * *", "America/New_York");
  int64_t from = LocalMs("America/New_York", 2026, 10, 30, 0, 0);
  int64_t slot = from;
  for (int i = 0; i < 40; ++i) {
    int64_t next = *schedule.NextAfter(slot);
    // Any `now` between this slot and the next names this slot.
    EXPECT_EQ(*schedule.LatestIn(from, next), next);
    EXPECT_EQ(*schedule.LatestIn(from, next + 60000), next);
    slot = next;
  }
}

TEST(ScheduleTest, MinimumIntervalAndNeverFiring) {
  int64_t from = UtcMs(2026, 12, 6, 0, 0);
  const int64_t hour = 3600000;
  EXPECT_TRUE(Make("0 * * * *", "Asia/Shanghai").CheckFiresAtMost(hour, from).ok());
  Status every_minute = Make("* * * * *", "Asia/Shanghai").CheckFiresAtMost(hour, from);
  EXPECT_NE(every_minute.message().find("fires 1 min apart, the minimum is 60 min"),
            std::string::npos)
      << every_minute.ToString();
  EXPECT_FALSE(Make("0,30 9 * * *", "Asia/Shanghai").CheckFiresAtMost(hour, from).ok());
  Status never = Make("0 9 30 2 *", "Asia/Shanghai").CheckFiresAtMost(hour, from);
  EXPECT_NE(never.message().find("never fires"), std::string::npos) << never.ToString();
  // February 29 fires (within five years).
  EXPECT_TRUE(Make("0 9 29 2 *", "Asia/Shanghai").CheckFiresAtMost(hour, from).ok());
}

TEST(ScheduleTest, PresetsAreCron) {
  EXPECT_EQ(PresetToCron({PresetKind::kHourly, 5})->text(), "5 * * * *");
  EXPECT_EQ(PresetToCron({PresetKind::kDaily, 30, 8})->text(), "30 8 * * *");
  EXPECT_EQ(PresetToCron({PresetKind::kWeekly, 0, 9, {1, 3}})->text(), "0 9 * * 1,3");
  EXPECT_EQ(PresetToCron({PresetKind::kMonthly, 0, 9, {}, 15})->text(), "0 9 15 * *");
  EXPECT_FALSE(PresetToCron({PresetKind::kWeekly, 0, 9, {}}).ok());
  EXPECT_FALSE(PresetToCron({PresetKind::kWeekly, 0, 9, {7}}).ok());
  EXPECT_FALSE(PresetToCron({PresetKind::kMonthly, 0, 9, {}, 31}).ok());
  EXPECT_FALSE(PresetToCron({PresetKind::kDaily, 60, 9}).ok());
  EXPECT_FALSE(PresetToCron({PresetKind::kDaily, 0, 24}).ok());
}

TEST(ScheduleTest, RefusesAnUnknownZone) {
  auto cron = CronExpression::Parse("0 9 * * *");
  auto schedule = Schedule::Make(*cron, "Mars/Olympus_Mons", false);
  ASSERT_FALSE(schedule.ok());
  EXPECT_NE(schedule.status().message().find("time zone 'Mars/Olympus_Mons' is not known"),
            std::string::npos);
  EXPECT_FALSE(Schedule::Make(*cron, "", false).ok());
  EXPECT_FALSE(Schedule::Make(*cron, "../../etc/passwd", false).ok());
  std::string long_name;
  for (int i = 0; i < 40; ++i) long_name += "区";  // 120 bytes: quoted cut, still UTF-8
  auto refused = Schedule::Make(*cron, long_name, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(utf8::IsValid(refused.status().message())) << refused.status().message();
}

}  // namespace
}  // namespace export_center::schedule
