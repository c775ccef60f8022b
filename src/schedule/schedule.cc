#include "schedule/schedule.h"

#include <chrono>

#include "common/utf8.h"

namespace export_center::schedule {
namespace {

// How far a scan looks for the next slot: five years covers every cron that
// fires at all (February 29 on a given weekday recurs within 28 years, but a
// day-of-month and day-of-week together match either, so it fires often).
constexpr int kScanDays = 5 * 366;
constexpr int64_t kYearMs = 366LL * 24 * 3600 * 1000;

using Seconds = cctz::time_point<cctz::seconds>;

int64_t ToMs(const Seconds& t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

Seconds FromMs(int64_t ms) {
  // Floor to the second: a slot is a whole minute, so nothing between matters.
  int64_t seconds = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  return Seconds(cctz::seconds(seconds));
}

bool IsWeekend(const cctz::civil_day& day) {
  cctz::weekday w = cctz::get_weekday(day);
  return w == cctz::weekday::saturday || w == cctz::weekday::sunday;
}

std::string Minutes(int64_t ms) { return std::to_string(ms / 60000) + " min"; }

}  // namespace

StatusOr<cctz::time_zone> LoadZone(const std::string& name) {
  cctz::time_zone zone;
  // cctz falls back to UTC for an unknown name and says so only by the bool.
  if (name.empty() || name.size() > 64 || !cctz::load_time_zone(name, &zone)) {
    return InvalidArgument("time zone '" + utf8::Excerpt(name, 64) +
                           "' is not known (an IANA name such as Asia/Shanghai)");
  }
  return zone;
}

StatusOr<CronExpression> PresetToCron(const Preset& preset) {
  if (preset.minute < 0 || preset.minute > 59) return InvalidArgument("schedule.minute: 0-59");
  if (preset.hour < 0 || preset.hour > 23) return InvalidArgument("schedule.hour: 0-23");
  std::string minute = std::to_string(preset.minute), hour = std::to_string(preset.hour);
  switch (preset.kind) {
    case PresetKind::kHourly:
      return CronExpression::Parse(minute + " * * * *");
    case PresetKind::kDaily:
      return CronExpression::Parse(minute + " " + hour + " * * *");
    case PresetKind::kWeekly: {
      if (preset.weekdays.empty() || preset.weekdays.size() > 7) {
        return InvalidArgument("schedule.weekdays: one to seven days");
      }
      std::string days;
      for (int day : preset.weekdays) {
        if (day < 0 || day > 6)
          return InvalidArgument("schedule.weekdays: 0 (Sunday) to 6 (Saturday)");
        days += (days.empty() ? "" : ",") + std::to_string(day);
      }
      return CronExpression::Parse(minute + " " + hour + " * * " + days);
    }
    case PresetKind::kMonthly:
      if (preset.day_of_month < 1 || preset.day_of_month > 28) {
        return InvalidArgument("schedule.dayOfMonth: 1-28 (a day every month has)");
      }
      return CronExpression::Parse(minute + " " + hour + " " + std::to_string(preset.day_of_month) +
                                   " * *");
  }
  return InvalidArgument("schedule: unknown preset");
}

StatusOr<Schedule> Schedule::Make(CronExpression cron, const std::string& time_zone,
                                  bool business_days_only) {
  auto zone = LoadZone(time_zone);
  if (!zone.ok()) return zone.status();
  return Schedule(std::move(cron), *zone, time_zone, business_days_only);
}

bool Schedule::FiresOn(const cctz::civil_day& day) const {
  return cron_.MatchesDay(day) && !(business_days_only_ && IsWeekend(day));
}

Schedule::Instants Schedule::InstantsOf(const cctz::civil_minute& minute) const {
  const cctz::time_zone::civil_lookup lookup = zone_.lookup(cctz::civil_second(minute));
  Instants out;
  switch (lookup.kind) {
    case cctz::time_zone::civil_lookup::SKIPPED:
      if (!cron_.wildcard_time()) out.ms[out.count++] = ToMs(lookup.trans);  // after the gap
      break;
    case cctz::time_zone::civil_lookup::REPEATED:
      out.ms[out.count++] = ToMs(lookup.pre);  // the first occurrence
      if (cron_.wildcard_time()) out.ms[out.count++] = ToMs(lookup.post);
      break;
    case cctz::time_zone::civil_lookup::UNIQUE:
      out.ms[out.count++] = ToMs(lookup.pre);
      break;
  }
  return out;
}

int64_t Schedule::DayStartMs(const cctz::civil_day& day) const {
  return ToMs(cctz::convert(cctz::civil_second(day), zone_));
}

bool Schedule::ClockShiftsOn(const cctz::civil_day& day) const {
  return DayStartMs(day + 1) - DayStartMs(day) != 24LL * 3600 * 1000;
}

std::optional<int64_t> Schedule::NextAfter(int64_t after_ms) const {
  const cctz::civil_minute start(cctz::convert(FromMs(after_ms), zone_));
  const cctz::civil_day first_day(start);
  for (cctz::civil_day day = first_day; day - first_day <= kScanDays; ++day) {
    if (!FiresOn(day)) continue;
    const bool shifts = ClockShiftsOn(day);
    std::optional<int64_t> earliest;
    for (int hour = 0; hour < 24; ++hour) {
      if (!cron_.MatchesHour(hour)) continue;
      for (int minute = 0; minute < 60; ++minute) {
        if (!cron_.MatchesMinute(minute)) continue;
        cctz::civil_minute candidate(day.year(), day.month(), day.day(), hour, minute);
        if (!shifts && candidate < start) continue;
        Instants instants = InstantsOf(candidate);
        for (int i = 0; i < instants.count; ++i) {
          int64_t instant = instants.ms[i];
          if (instant > after_ms && (!earliest || instant < *earliest)) earliest = instant;
        }
        if (earliest && !shifts) return earliest;
      }
    }
    if (earliest) return earliest;
  }
  return std::nullopt;
}

std::optional<int64_t> Schedule::LatestIn(int64_t after_ms, int64_t now_ms) const {
  if (now_ms <= after_ms) return std::nullopt;
  const cctz::civil_minute end(cctz::convert(FromMs(now_ms), zone_));
  const cctz::civil_day last_day(end);
  // Backwards from now: the first slot found is the latest; stop at after_ms.
  for (cctz::civil_day day = last_day; last_day - day <= kScanDays; --day) {
    if (!FiresOn(day)) {
      if (DayStartMs(day) <= after_ms) return std::nullopt;
      continue;
    }
    const bool shifts = ClockShiftsOn(day);
    std::optional<int64_t> latest;
    bool reached_after = false;
    for (int hour = 23; hour >= 0 && !(!shifts && (latest || reached_after)); --hour) {
      if (!cron_.MatchesHour(hour)) continue;
      for (int minute = 59; minute >= 0; --minute) {
        if (!cron_.MatchesMinute(minute)) continue;
        cctz::civil_minute candidate(day.year(), day.month(), day.day(), hour, minute);
        if (!shifts && candidate > end) continue;
        Instants instants = InstantsOf(candidate);
        for (int i = 0; i < instants.count; ++i) {
          int64_t instant = instants.ms[i];
          if (instant <= after_ms) {
            reached_after = true;
          } else if (instant <= now_ms && (!latest || instant > *latest)) {
            latest = instant;
          }
        }
        if (!shifts && (latest || reached_after)) break;
      }
    }
    if (latest) return latest;
    if (reached_after) return std::nullopt;
  }
  return std::nullopt;
}

Status Schedule::CheckFiresAtMost(int64_t min_interval_ms, int64_t from_ms) const {
  std::optional<int64_t> previous = NextAfter(from_ms);
  if (!previous) {
    return InvalidArgument("cron '" + cron_.text() + "' never fires (no slot in five years)");
  }
  const int64_t horizon = from_ms + kYearMs;
  while (*previous < horizon) {
    std::optional<int64_t> next = NextAfter(*previous);
    if (!next) break;
    if (*next - *previous < min_interval_ms) {
      return InvalidArgument("cron '" + cron_.text() + "' in " + zone_name_ + " fires " +
                             Minutes(*next - *previous) + " apart, the minimum is " +
                             Minutes(min_interval_ms));
    }
    previous = next;
  }
  return Status::Ok();
}

}  // namespace export_center::schedule
