#pragma once
// Schedule: the instants a subscription fires (docs/subscriptions.md#schedules).
//
// A cron expression (cron.h, or one made from a preset) read in an IANA time
// zone, optionally on business days only (Monday to Friday; no holiday
// calendar). Instants are epoch milliseconds, UTC; a slot is the instant of
// one firing and names it (what the fleet claims once, subscription_store).
//
// Daylight saving time, decided as Vixie cron decides it, by the kind of job:
// - a fixed time (minute and hour fields without a leading `*`: `30 2 * * *`)
//   fires once per local day: a time in the spring-forward gap fires at the
//   first instant after the gap (a 02:30 job in America/New_York on the second
//   Sunday of March fires at 03:00 EDT; several such times fire once), and a
//   time that happens twice (the fall-back hour) fires at its first occurrence;
// - a wildcard time (`15 * * * *`, `*/30 * * * *`) follows elapsed time: a
//   minute in the gap does not exist and does not fire, a minute of the
//   repeated hour fires at each occurrence — so "hourly" stays 60 minutes
//   apart across both changes.

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "schedule/cron.h"

namespace export_center::schedule {

// The presets the page offers; each is a cron expression (PresetToCron).
enum class PresetKind { kHourly, kDaily, kWeekly, kMonthly };

struct Preset {
  PresetKind kind = PresetKind::kDaily;
  int minute = 0;               // 0..59; kHourly uses only this
  int hour = 9;                 // 0..23
  std::vector<int> weekdays{};  // kWeekly: 0 = Sunday .. 6 = Saturday, at least one
  int day_of_month = 1;         // kMonthly: 1..28, so every month has it
};

// InvalidArgument naming the preset field that is out of range.
StatusOr<CronExpression> PresetToCron(const Preset& preset);

class Schedule {
 public:
  // Refuses an unknown zone (`time zone 'Mars/Base' is not known`).
  static StatusOr<Schedule> Make(CronExpression cron, const std::string& time_zone,
                                 bool business_days_only);

  // The first slot strictly after `after_ms`, or nullopt when none comes in
  // the next five years (a cron that never fires: `0 9 30 2 *`).
  std::optional<int64_t> NextAfter(int64_t after_ms) const;

  // The latest slot in (after_ms, now_ms], or nullopt. What a fleet that was
  // down runs on return: one slot, the latest, never the burst of all of them.
  std::optional<int64_t> LatestIn(int64_t after_ms, int64_t now_ms) const;

  // OK when the schedule fires within five years of `from_ms` and no two of
  // its slots in the year after `from_ms` are closer than `min_interval_ms`;
  // else InvalidArgument saying which (`cron '* * * * *' fires every 1 min,
  // the minimum is 60 min`).
  Status CheckFiresAtMost(int64_t min_interval_ms, int64_t from_ms) const;

  const CronExpression& cron() const { return cron_; }
  const std::string& time_zone_name() const { return zone_name_; }
  bool business_days_only() const { return business_days_only_; }

 private:
  Schedule(CronExpression cron, cctz::time_zone zone, std::string zone_name,
           bool business_days_only)
      : cron_(std::move(cron)),
        zone_(zone),
        zone_name_(std::move(zone_name)),
        business_days_only_(business_days_only) {}
  // The instants a matching local minute fires at (the rules above): none,
  // one, or — a wildcard time in the repeated hour — two, earliest first.
  struct Instants {
    int count = 0;
    int64_t ms[2] = {0, 0};
  };
  bool FiresOn(const cctz::civil_day& day) const;
  Instants InstantsOf(const cctz::civil_minute& minute) const;
  // Whether the zone's offset changes during `day`. On other days instants
  // follow civil order, so a scan may stop at the first match; on such a day
  // it takes the earliest (latest) instant of the whole day.
  bool ClockShiftsOn(const cctz::civil_day& day) const;
  int64_t DayStartMs(const cctz::civil_day& day) const;

  CronExpression cron_;
  cctz::time_zone zone_;
  std::string zone_name_;
  bool business_days_only_ = false;
};

// Loads an IANA zone by name from the system's zoneinfo (tzdata).
StatusOr<cctz::time_zone> LoadZone(const std::string& name);

}  // namespace export_center::schedule
