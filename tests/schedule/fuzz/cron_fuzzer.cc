// libFuzzer target for the cron text a subscription's owner types
// (schedule/cron.h), and the slot arithmetic over whatever parses: the next
// slot is strictly later, and the latest slot up to it is that slot, in a
// zone with both daylight-saving changes. Errors are fine; a crash, a hang or
// a broken invariant is not.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "schedule/relative_date.h"
#include "schedule/schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace schedule = export_center::schedule;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)schedule::ParseRelativeRange(text);
  auto cron = schedule::CronExpression::Parse(text);
  if (!cron.ok()) return 0;
  static const auto kZones = {"America/New_York", "Asia/Shanghai"};
  for (const char* zone : kZones) {
    auto made = schedule::Schedule::Make(*cron, zone, size % 2 == 0);
    if (!made.ok()) std::abort();        // both zones exist
    const int64_t from = 1772000000000;  // 2026-02-25, before New York's spring change
    auto next = made->NextAfter(from);
    if (!next) continue;
    if (*next <= from) std::abort();
    auto latest = made->LatestIn(from, *next);
    if (!latest || *latest != *next) std::abort();
    (void)made->CheckFiresAtMost(3600000, from);
  }
  return 0;
}
