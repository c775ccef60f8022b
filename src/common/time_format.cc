#include "common/time_format.h"

#include <cstdio>
#include <ctime>

namespace export_center {

std::string FormatIsoMillis(int64_t epoch_ms) {
  // Floor division: C++ `/` truncates toward zero, which would put -1 ms in
  // 1970 with a negative millisecond field.
  const int64_t secs = epoch_ms >= 0 ? epoch_ms / 1000 : (epoch_ms - 999) / 1000;
  const int millis = static_cast<int>(epoch_ms - secs * 1000);
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

}  // namespace export_center
