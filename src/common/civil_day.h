#pragma once
// A civil date: a day of the proleptic Gregorian calendar with no time zone
// (abseil's absl::CivilDay is the model). The one calendar of the center:
// every date rule — a provider's wire value, a replica's DATE text, a
// template parameter, a writer's cell — builds a CivilDay, so every route
// accepts and refuses the same dates (docs/conventions.md#shared-helpers).
//
// Unlike absl::CivilDay, construction validates instead of normalising: there
// is no CivilDay for 2023-02-31, and years are 0001..9999, what every writer
// and Excel can show. A CivilDay that exists can always be written.
//
// A value type: cheap to copy, pure, thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace export_center {

class CivilDay {
 public:
  static constexpr int kMinYear = 1;
  static constexpr int kMaxYear = 9999;

  // 1970-01-01, the epoch day.
  constexpr CivilDay() = default;

  // The date year-month-day, or nullopt when it is not a day of the calendar
  // (month 1..12, day 1..days in that month, leap years by the Gregorian
  // rule) or the year is outside kMinYear..kMaxYear.
  static std::optional<CivilDay> FromYmd(int64_t year, int64_t month, int64_t day);

  // The day `days` after 1970-01-01 (negative: before), or nullopt outside
  // the year range.
  static std::optional<CivilDay> FromDays(int64_t days);

  // Exactly "YYYY-MM-DD" (four, two and two ASCII digits), validated as
  // FromYmd. Anything else, a sign, a space or a time included, is nullopt.
  static std::optional<CivilDay> Parse(std::string_view text);

  // "YYYY-MM-DD" at the start of `text`; the rest (a time of day, say) is the
  // caller's. nullopt as Parse.
  static std::optional<CivilDay> ParsePrefix(std::string_view text);

  int year() const { return year_; }
  int month() const { return month_; }
  int day() const { return day_; }

  // Days since 1970-01-01 (negative before).
  int64_t days() const;

  // "YYYY-MM-DD".
  std::string ToString() const;
  // Appends exactly 10 bytes, "YYYY-MM-DD".
  void AppendTo(std::string* out) const;

  friend bool operator==(const CivilDay& a, const CivilDay& b) {
    return a.year_ == b.year_ && a.month_ == b.month_ && a.day_ == b.day_;
  }
  friend bool operator!=(const CivilDay& a, const CivilDay& b) { return !(a == b); }
  friend bool operator<(const CivilDay& a, const CivilDay& b) { return a.days() < b.days(); }

 private:
  constexpr CivilDay(int year, int month, int day) : year_(year), month_(month), day_(day) {}

  int year_ = 1970;
  int month_ = 1;
  int day_ = 1;
};

namespace civil {

// The calendar arithmetic under CivilDay, for callers that hold a time of day
// as well (a DATETIME's date part) or a day count from a clock. Unchecked:
// the fields must already be a real date (CivilDay::FromYmd) or come from
// DaysToYmd.
bool IsLeapYear(int64_t year);
int DaysInMonth(int64_t year, int month);  // REQUIRES: 1 <= month <= 12
int64_t DaysFromYmd(int64_t year, int64_t month, int64_t day);
void DaysToYmd(int64_t days, int64_t* year, int* month, int* day);

}  // namespace civil

}  // namespace export_center
