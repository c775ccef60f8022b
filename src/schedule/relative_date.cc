#include "schedule/relative_date.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <utility>

namespace export_center::schedule {
namespace {

constexpr std::array<std::pair<std::string_view, RelativeRange>, 7> kRanges{{
    {"today", RelativeRange::kToday},
    {"yesterday", RelativeRange::kYesterday},
    {"last-7-days", RelativeRange::kLast7Days},
    {"last-30-days", RelativeRange::kLast30Days},
    {"last-week", RelativeRange::kLastWeek},
    {"last-month", RelativeRange::kLastMonth},
    {"this-month-to-date", RelativeRange::kThisMonthToDate},
}};

struct DayRange {
  cctz::civil_day start;
  cctz::civil_day end;
};

DayRange RangeOn(RelativeRange range, const cctz::civil_day& today) {
  switch (range) {
    case RelativeRange::kToday:
      return {today, today};
    case RelativeRange::kYesterday:
      return {today - 1, today - 1};
    case RelativeRange::kLast7Days:
      return {today - 7, today - 1};
    case RelativeRange::kLast30Days:
      return {today - 30, today - 1};
    case RelativeRange::kLastWeek: {
      cctz::civil_day this_monday = cctz::prev_weekday(today + 1, cctz::weekday::monday);
      return {this_monday - 7, this_monday - 1};
    }
    case RelativeRange::kLastMonth: {
      const cctz::civil_day first_of_this{cctz::civil_month(today)};
      return {cctz::civil_day(cctz::civil_month(first_of_this) - 1), first_of_this - 1};
    }
    case RelativeRange::kThisMonthToDate:
      return {cctz::civil_day(cctz::civil_month(today)), today};
  }
  return {today, today};
}

}  // namespace

StatusOr<RelativeRange> ParseRelativeRange(std::string_view name) {
  for (const auto& [text, range] : kRanges) {
    if (name == text) return range;
  }
  std::string names;
  for (const auto& entry : kRanges) names += (names.empty() ? "" : ", ") + std::string(entry.first);
  return InvalidArgument("relative date: one of " + names);
}

StatusOr<RangeBound> ParseRangeBound(std::string_view name) {
  if (name == "start") return RangeBound::kStart;
  if (name == "end") return RangeBound::kEnd;
  return InvalidArgument("relative date bound: start or end");
}

std::string_view RelativeRangeName(RelativeRange range) {
  for (const auto& [text, value] : kRanges) {
    if (value == range) return text;
  }
  return "?";
}

cctz::civil_day ResolveRelativeDate(const RelativeDate& relative, int64_t run_ms,
                                    const cctz::time_zone& zone) {
  auto instant = std::chrono::time_point_cast<cctz::seconds>(
      std::chrono::system_clock::time_point(std::chrono::milliseconds(run_ms)));
  cctz::civil_day today(cctz::convert(instant, zone));
  DayRange range = RangeOn(relative.range, today);
  return relative.bound == RangeBound::kStart ? range.start : range.end;
}

std::string FormatDay(const cctz::civil_day& day) {
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d", static_cast<int>(day.year()), day.month(),
                day.day());
  return text;
}

}  // namespace export_center::schedule
