#include "common/backoff.h"

#include <gtest/gtest.h>

namespace export_center {
namespace {

TEST(OutboxBackoff, FollowsTheTableThenStaysAtTheLastStepForever) {
  const std::vector<int> steps = {5, 15, 60, 300, 900};
  EXPECT_EQ(OutboxBackoffMs(steps, 1), 5000);
  EXPECT_EQ(OutboxBackoffMs(steps, 2), 15000);
  EXPECT_EQ(OutboxBackoffMs(steps, 5), 900000);
  EXPECT_EQ(OutboxBackoffMs(steps, 6), 900000);
  EXPECT_EQ(OutboxBackoffMs(steps, 1000), 900000);
}

TEST(RetryBackoff, JitterStaysWithinTwentyPercent) {
  const std::vector<int> steps = {60, 900};
  EXPECT_EQ(RetryBackoffMs(steps, 1, 0.0), 48000);
  EXPECT_EQ(RetryBackoffMs(steps, 1, 0.5), 60000);
  EXPECT_EQ(RetryBackoffMs(steps, 1, 1.0), 72000);
  EXPECT_EQ(RetryBackoffMs(steps, 2, 0.5), 900000);
  EXPECT_EQ(RetryBackoffMs(steps, 3, 0.5), 900000);
}

}  // namespace
}  // namespace export_center
