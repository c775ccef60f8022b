#pragma once
// Relative DATE parameters of a subscription, resolved at each run in the
// schedule's zone (docs/subscriptions.md#relative-parameters).
//
// A subscription may store, for a DATE parameter, instead of a date:
//   {"relative": "last-month", "bound": "start"}
// and each run writes the concrete date of that run into the task's
// parameters, so the task (and its retries) is an ordinary export with fixed
// dates. Ranges name their first or last day with `bound` ("start" | "end");
// single days ignore it. All ranges end on or before the run's day:
//
// | relative | start | end |
// |---|---|---|
// | today | the run's day | the same |
// | yesterday | the day before | the same |
// | last-7-days | 7 days before | yesterday |
// | last-30-days | 30 days before | yesterday |
// | last-week | Monday of the previous week | its Sunday |
// | last-month | the 1st of the previous month | its last day |
// | this-month-to-date | the 1st of this month | today |

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center::schedule {

enum class RelativeRange {
  kToday,
  kYesterday,
  kLast7Days,
  kLast30Days,
  kLastWeek,
  kLastMonth,
  kThisMonthToDate
};
enum class RangeBound { kStart, kEnd };

struct RelativeDate {
  RelativeRange range = RelativeRange::kYesterday;
  RangeBound bound = RangeBound::kStart;
};

// Parses the names above; InvalidArgument listing the accepted names.
StatusOr<RelativeRange> ParseRelativeRange(std::string_view name);
StatusOr<RangeBound> ParseRangeBound(std::string_view name);
std::string_view RelativeRangeName(RelativeRange range);

// The date `relative` names for a run at `run_ms`, in `zone`.
cctz::civil_day ResolveRelativeDate(const RelativeDate& relative, int64_t run_ms,
                                    const cctz::time_zone& zone);

// "2026-12-07"
std::string FormatDay(const cctz::civil_day& day);

}  // namespace export_center::schedule
