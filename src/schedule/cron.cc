#include "schedule/cron.h"

#include <array>
#include <charconv>
#include <vector>

#include "common/ascii.h"
#include "common/utf8.h"

namespace export_center::schedule {
namespace {

struct FieldSpec {
  std::string_view name;
  int min;
  int max;
  // Names accepted instead of numbers, index + min = value ("JAN" = 1).
  std::array<std::string_view, 12> names;
};

constexpr FieldSpec kMinute{"minute", 0, 59, {}};
constexpr FieldSpec kHour{"hour", 0, 23, {}};
constexpr FieldSpec kDayOfMonth{"day-of-month", 1, 31, {}};
constexpr FieldSpec kMonth{
    "month",
    1,
    12,
    {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}};
// 7 is Sunday too; the caller folds it onto 0.
constexpr FieldSpec kDayOfWeek{
    "day-of-week", 0, 7, {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}};

Status FieldError(const FieldSpec& spec, std::string_view part, std::string_view why) {
  return InvalidArgument("cron field '" + std::string(spec.name) + "': '" +
                         utf8::Excerpt(part, 32) + "' " + std::string(why));
}

StatusOr<int> ParseValue(const FieldSpec& spec, std::string_view text) {
  for (size_t i = 0; i < spec.names.size() && !spec.names[i].empty(); ++i) {
    if (EqualsIgnoreCaseAscii(text, spec.names[i])) return spec.min + static_cast<int>(i);
  }
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return FieldError(spec, text, "is not a number or name");
  }
  if (value < spec.min || value > spec.max) {
    return FieldError(
        spec, text, "is out of range " + std::to_string(spec.min) + "-" + std::to_string(spec.max));
  }
  return value;
}

// One list element: `*`, `v`, `a-b`, each optionally `/step`.
Status ParsePart(const FieldSpec& spec, std::string_view part, std::vector<bool>* set) {
  int step = 1;
  std::string_view range = part;
  if (size_t slash = part.find('/'); slash != std::string_view::npos) {
    range = part.substr(0, slash);
    std::string_view step_text = part.substr(slash + 1);
    auto [end, error] =
        std::from_chars(step_text.data(), step_text.data() + step_text.size(), step);
    if (error != std::errc() || end != step_text.data() + step_text.size() || step < 1 ||
        step > spec.max) {
      return FieldError(spec, part, "has a bad step");
    }
  }
  int low = spec.min, high = spec.max;
  if (range != "*") {
    size_t dash = range.find('-');
    auto first = ParseValue(spec, range.substr(0, dash));
    if (!first.ok()) return first.status();
    low = high = *first;
    if (dash != std::string_view::npos) {
      auto last = ParseValue(spec, range.substr(dash + 1));
      if (!last.ok()) return last.status();
      high = *last;
      if (high < low) return FieldError(spec, part, "is a range that ends before it starts");
    } else if (step > 1) {
      high = spec.max;  // `5/15` means 5-max/15, as in Vixie cron
    }
  }
  for (int v = low; v <= high; v += step) (*set)[static_cast<size_t>(v)] = true;
  return Status::Ok();
}

// Returns whether the field counts as restricted for the two day fields' OR
// rule: like Vixie cron, a field that starts with `*` (`*`, `*/2`) does not.
StatusOr<bool> ParseField(const FieldSpec& spec, std::string_view field, std::vector<bool>* set) {
  set->assign(static_cast<size_t>(spec.max) + 1, false);
  size_t start = 0;
  while (start <= field.size()) {
    size_t comma = field.find(',', start);
    std::string_view part = field.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (part.empty()) return FieldError(spec, field, "has an empty list element");
    if (Status s = ParsePart(spec, part, set); !s.ok()) return s;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return field.front() != '*';
}

template <size_t N>
std::bitset<N> ToBits(const std::vector<bool>& set) {
  std::bitset<N> bits;
  for (size_t i = 0; i < set.size() && i < N; ++i) bits[i] = set[i];
  return bits;
}

std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

}  // namespace

StatusOr<CronExpression> CronExpression::Parse(std::string_view text) {
  if (text.size() > kMaxCronBytes) {
    return InvalidArgument("cron: longer than " + std::to_string(kMaxCronBytes) + " bytes");
  }
  if (!utf8::IsValid(text)) return InvalidArgument("cron: not valid UTF-8");
  std::vector<std::string_view> fields = SplitFields(text);
  if (fields.size() != 5) {
    return InvalidArgument("cron: '" + utf8::Excerpt(text, 64) + "' has " +
                           std::to_string(fields.size()) +
                           " fields, expected 5 (minute hour day-of-month month day-of-week)");
  }
  CronExpression cron;
  std::vector<bool> set;
  const FieldSpec* specs[] = {&kMinute, &kHour, &kDayOfMonth, &kMonth, &kDayOfWeek};
  for (size_t f = 0; f < 5; ++f) {
    auto restricted = ParseField(*specs[f], fields[f], &set);
    if (!restricted.ok()) return restricted.status();
    switch (f) {
      case 0:
        cron.minutes_ = ToBits<60>(set);
        cron.wildcard_time_ = !*restricted;
        break;
      case 1:
        cron.hours_ = ToBits<24>(set);
        cron.wildcard_time_ = cron.wildcard_time_ || !*restricted;
        break;
      case 2:
        cron.days_ = ToBits<32>(set);
        cron.days_restricted_ = *restricted;
        break;
      case 3:
        cron.months_ = ToBits<13>(set);
        break;
      case 4:
        if (set[7]) set[0] = true;  // 7 is Sunday as well
        cron.weekdays_ = ToBits<7>(set);
        cron.weekdays_restricted_ = *restricted;
        break;
    }
    if (f) cron.text_ += ' ';
    cron.text_ += fields[f];
  }
  return cron;
}

bool CronExpression::MatchesDay(const cctz::civil_day& day) const {
  if (!months_.test(static_cast<size_t>(day.month()))) return false;
  bool day_match = days_.test(static_cast<size_t>(day.day()));
  // cctz's weekday enum starts at Monday; cron counts from Sunday = 0.
  int weekday = (static_cast<int>(cctz::get_weekday(day)) + 1) % 7;
  bool weekday_match = weekdays_.test(static_cast<size_t>(weekday));
  if (days_restricted_ && weekdays_restricted_) return day_match || weekday_match;
  return day_match && weekday_match;
}

}  // namespace export_center::schedule
