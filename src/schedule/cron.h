#pragma once
// CronExpression: when a subscription fires, as local wall-clock minutes
// (docs/subscriptions.md#schedules).
//
// Five fields — minute hour day-of-month month day-of-week — with Vixie
// cron's grammar and meaning: `*`, numbers, ranges `a-b`, lists `a,b`, steps
// `*/n` and `a-b/n`, month names JAN..DEC and day names SUN..SAT (0 and 7 are
// both Sunday). When both day fields are restricted a day matches either one
// (`0 9 1 * MON` fires on the 1st and on every Monday), as in every cron.
// Seconds, `L`, `W`, `#` and `?` are not accepted: one grammar operators
// already know, nothing a Quartz user might read differently.

#include <cctz/civil_time.h>

#include <bitset>
#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center::schedule {

inline constexpr size_t kMaxCronBytes = 200;

class CronExpression {
 public:
  // InvalidArgument naming the field and the text that is wrong:
  // `cron field 'hour': 25 is out of range 0-23`.
  static StatusOr<CronExpression> Parse(std::string_view text);

  // True when the day (its month, day of month and weekday) may fire.
  bool MatchesDay(const cctz::civil_day& day) const;
  bool MatchesHour(int hour) const { return hours_.test(static_cast<size_t>(hour)); }
  bool MatchesMinute(int minute) const { return minutes_.test(static_cast<size_t>(minute)); }
  // True when the minute or the hour field starts with `*` (`15 * * * *`,
  // `*/30 9-17 * * *`): Vixie cron's "wildcard" jobs, which follow elapsed
  // time across a daylight-saving change rather than the wall clock
  // (schedule.h says what that means).
  bool wildcard_time() const { return wildcard_time_; }

  // The text it was parsed from, whitespace collapsed: "0 9 * * MON".
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;     // 1..31
  std::bitset<13> months_;   // 1..12
  std::bitset<7> weekdays_;  // 0 = Sunday
  bool days_restricted_ = false;
  bool weekdays_restricted_ = false;
  bool wildcard_time_ = false;
};

}  // namespace export_center::schedule
