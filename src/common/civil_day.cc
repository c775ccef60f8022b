#include "common/civil_day.h"

namespace export_center {
namespace civil {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

}  // namespace

bool IsLeapYear(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// Howard Hinnant's days_from_civil and civil_from_days: exact for the
// proleptic Gregorian calendar, any year.
int64_t DaysFromYmd(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void DaysToYmd(int64_t z, int64_t* year, int* month, int* day) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (m <= 2);
  *month = m;
  *day = d;
}

}  // namespace civil

namespace {

// Exactly `n` ASCII digits at text[pos], or -1.
int Digits(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

void AppendDigits(int v, int width, std::string* out) {
  char buf[4];
  for (int i = width - 1; i >= 0; --i, v /= 10) buf[i] = static_cast<char>('0' + v % 10);
  out->append(buf, width);
}

}  // namespace

std::optional<CivilDay> CivilDay::FromYmd(int64_t year, int64_t month, int64_t day) {
  if (year < kMinYear || year > kMaxYear || month < 1 || month > 12 || day < 1 ||
      day > civil::DaysInMonth(year, static_cast<int>(month))) {
    return std::nullopt;
  }
  return CivilDay(static_cast<int>(year), static_cast<int>(month), static_cast<int>(day));
}

std::optional<CivilDay> CivilDay::FromDays(int64_t days) {
  static const int64_t kMin = civil::DaysFromYmd(kMinYear, 1, 1);
  static const int64_t kMax = civil::DaysFromYmd(kMaxYear, 12, 31);
  if (days < kMin || days > kMax) return std::nullopt;
  int64_t y = 0;
  int m = 0, d = 0;
  civil::DaysToYmd(days, &y, &m, &d);
  return CivilDay(static_cast<int>(y), m, d);
}

std::optional<CivilDay> CivilDay::ParsePrefix(std::string_view text) {
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  const int y = Digits(text, 0, 4), m = Digits(text, 5, 2), d = Digits(text, 8, 2);
  if (y < 0 || m < 0 || d < 0) return std::nullopt;
  return FromYmd(y, m, d);
}

std::optional<CivilDay> CivilDay::Parse(std::string_view text) {
  if (text.size() != 10) return std::nullopt;
  return ParsePrefix(text);
}

int64_t CivilDay::days() const { return civil::DaysFromYmd(year_, month_, day_); }

void CivilDay::AppendTo(std::string* out) const {
  AppendDigits(year_, 4, out);
  out->push_back('-');
  AppendDigits(month_, 2, out);
  out->push_back('-');
  AppendDigits(day_, 2, out);
}

std::string CivilDay::ToString() const {
  std::string out;
  out.reserve(10);
  AppendTo(&out);
  return out;
}

}  // namespace export_center
