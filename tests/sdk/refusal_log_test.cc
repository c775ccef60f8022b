#include "sdk/refusal_log.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace export_center::sdk {
namespace {

// At most one line per interval; the next line counts what was held back.
TEST(RefusalLog, OneLinePerIntervalWithTheHeldBackCount) {
  std::vector<std::string> lines;
  auto now = std::chrono::steady_clock::time_point{};
  RefusalLog log([&](const std::string& line) { lines.push_back(line); }, std::chrono::seconds(10),
                 [&] { return now; });
  log.Refused("a");
  for (int i = 0; i < 5; ++i) {
    now += std::chrono::seconds(1);
    log.Refused("held back");
  }
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "export-center sdk: refused contract call: a");
  now += std::chrono::seconds(5);  // 10 s after the first line
  log.Refused("b");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1],
            "export-center sdk: refused contract call: b (5 more refused since the last line, not "
            "logged)");
  now += std::chrono::seconds(10);
  log.Refused("c");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "export-center sdk: refused contract call: c");
}

}  // namespace
}  // namespace export_center::sdk
