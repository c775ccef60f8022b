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

// The caller's path is the caller's choice: a decoded %0A must not start a
// forged second line, and a long path does not make a long line.
TEST(RefusalLog, WhatTheCallerSentIsOneBoundedLine) {
  std::vector<std::string> lines;
  auto now = std::chrono::steady_clock::time_point{};
  RefusalLog log([&](const std::string& line) { lines.push_back(line); }, std::chrono::seconds(1),
                 [&] { return now; });
  log.Refused("POST /x\n[info] forged line\r\x7f: no X-Internal-Service-Token");
  now += std::chrono::seconds(2);
  log.Refused("POST /" + std::string(1000, 'a') + "\xe4\xb8\xad");
  now += std::chrono::seconds(2);
  log.Refused(std::string(299, 'b') + "\xe4\xb8\xad\xe4\xb8\xad");  // cut after one 中
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "export-center sdk: refused contract call: POST /x\\x0a[info] forged line\\x0d\\x7f: "
            "no X-Internal-Service-Token");
  const std::string prefix = "export-center sdk: refused contract call: ";
  EXPECT_EQ(lines[1], prefix + "POST /" + std::string(294, 'a') + "...");
  EXPECT_EQ(lines[2], prefix + std::string(299, 'b') + "\xe4\xb8\xad...");
}

}  // namespace
}  // namespace export_center::sdk
