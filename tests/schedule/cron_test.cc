#include "schedule/cron.h"

#include <gtest/gtest.h>

namespace export_center::schedule {
namespace {

CronExpression Cron(std::string_view text) {
  auto cron = CronExpression::Parse(text);
  EXPECT_TRUE(cron.ok()) << cron.status().ToString();
  return *cron;
}

std::string ParseError(std::string_view text) {
  auto cron = CronExpression::Parse(text);
  EXPECT_FALSE(cron.ok()) << text;
  return cron.ok() ? "" : cron.status().message();
}

TEST(CronTest, ParsesListsRangesStepsAndNames) {
  CronExpression cron = Cron("*/15 9-17/4 * JAN,jul MON-FRI");
  for (int m : {0, 15, 30, 45}) EXPECT_TRUE(cron.MatchesMinute(m));
  EXPECT_FALSE(cron.MatchesMinute(5));
  for (int h : {9, 13, 17}) EXPECT_TRUE(cron.MatchesHour(h));
  EXPECT_FALSE(cron.MatchesHour(10));
  EXPECT_TRUE(cron.MatchesDay(cctz::civil_day(2026, 1, 5)));   // a Monday in January
  EXPECT_FALSE(cron.MatchesDay(cctz::civil_day(2026, 1, 4)));  // a Sunday
  EXPECT_FALSE(cron.MatchesDay(cctz::civil_day(2026, 2, 2)));  // a Monday in February
  EXPECT_TRUE(cron.MatchesDay(cctz::civil_day(2026, 7, 1)));   // a Wednesday in July
  EXPECT_EQ(cron.text(), "*/15 9-17/4 * JAN,jul MON-FRI");
}

TEST(CronTest, WildcardTimeIsAMinuteOrHourFieldStartingWithAStar) {
  auto time_of = [](const char* text) { return CronExpression::Parse(text)->wildcard_time(); };
  EXPECT_TRUE(time_of("15 * * * *"));
  EXPECT_TRUE(time_of("*/30 9 * * *"));
  EXPECT_TRUE(time_of("0 */2 * * *"));
  EXPECT_FALSE(time_of("30 2 * * *"));
  EXPECT_FALSE(time_of("0,30 1-3 * * *"));
  EXPECT_FALSE(time_of("0 9 * * *"));  // the day fields do not count
}

TEST(CronTest, SevenAndZeroAreBothSunday) {
  EXPECT_TRUE(Cron("0 9 * * 7").MatchesDay(cctz::civil_day(2026, 12, 6)));  // Sunday
  EXPECT_TRUE(Cron("0 9 * * 0").MatchesDay(cctz::civil_day(2026, 12, 6)));
  EXPECT_FALSE(Cron("0 9 * * 0").MatchesDay(cctz::civil_day(2026, 12, 7)));
}

TEST(CronTest, BothDayFieldsRestrictedMeansEither) {
  CronExpression cron = Cron("0 9 1 * MON");
  EXPECT_TRUE(cron.MatchesDay(cctz::civil_day(2026, 12, 1)));   // the 1st, a Tuesday
  EXPECT_TRUE(cron.MatchesDay(cctz::civil_day(2026, 12, 7)));   // a Monday
  EXPECT_FALSE(cron.MatchesDay(cctz::civil_day(2026, 12, 8)));  // neither
  // A starred day-of-week (even stepped) leaves day-of-month alone, as Vixie cron does.
  CronExpression starred = Cron("0 9 1 * */2");
  EXPECT_FALSE(starred.MatchesDay(cctz::civil_day(2026, 12, 8)));
  EXPECT_TRUE(starred.MatchesDay(cctz::civil_day(2026, 12, 1)));  // the 1st, Tuesday = 2
}

TEST(CronTest, StepFromASingleValueRunsToTheEnd) {
  CronExpression cron = Cron("5/20 * * * *");
  EXPECT_TRUE(cron.MatchesMinute(5));
  EXPECT_TRUE(cron.MatchesMinute(25));
  EXPECT_TRUE(cron.MatchesMinute(45));
  EXPECT_FALSE(cron.MatchesMinute(0));
}

TEST(CronTest, RefusesBadTextNamingTheField) {
  EXPECT_NE(ParseError("0 25 * * *").find("field 'hour': '25' is out of range 0-23"),
            std::string::npos);
  EXPECT_NE(ParseError("0 9 * * FUNDAY").find("field 'day-of-week'"), std::string::npos);
  EXPECT_NE(ParseError("0 9 0 * *").find("field 'day-of-month'"), std::string::npos);
  EXPECT_NE(ParseError("0 9 * 13 *").find("field 'month'"), std::string::npos);
  EXPECT_NE(ParseError("0 9 * *").find("has 4 fields, expected 5"), std::string::npos);
  EXPECT_NE(ParseError("0 9 * * * *").find("has 6 fields"), std::string::npos);
  EXPECT_NE(ParseError("*/0 * * * *").find("bad step"), std::string::npos);
  EXPECT_NE(ParseError("5-1 * * * *").find("ends before it starts"), std::string::npos);
  EXPECT_NE(ParseError("1,,2 * * * *").find("empty list element"), std::string::npos);
  EXPECT_NE(ParseError("0 9 L * *").find("not a number or name"), std::string::npos);
  EXPECT_NE(ParseError(std::string(300, '1')).find("longer than 200"), std::string::npos);
  EXPECT_NE(ParseError("0 9 * * \xff").find("UTF-8"), std::string::npos);
  ParseError("");
  ParseError("- * * * *");
  ParseError("-1 * * * *");
}

}  // namespace
}  // namespace export_center::schedule
