// BrokerFaultTracker's decisions on a fake clock: which queue a send tries,
// how long an attempt may take, and how isolation grows and ends.

#include "rocketmq/broker_fault_tracker.h"

#include <gtest/gtest.h>

namespace export_center::rocketmq {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = BrokerFaultTracker::Clock;

class BrokerFaultTrackerTest : public ::testing::Test {
 protected:
  BrokerFaultTrackerTest() : tracker_({seconds(30), seconds(120)}, [this] { return now_; }) {}

  // Two queues on broker-a, then two on broker-b, as a route lists them.
  static std::vector<MessageQueue> TwoBrokers() {
    return {{"t", "broker-a", 0}, {"t", "broker-a", 1}, {"t", "broker-b", 0}, {"t", "broker-b", 1}};
  }
  std::string BrokerPicked(uint64_t start, const std::string& avoid = "") {
    std::optional<MessageQueue> q = tracker_.Pick(TwoBrokers(), start, avoid);
    return q ? q->broker_name : "none";
  }

  Clock::time_point now_ = Clock::time_point() + std::chrono::hours(1);
  BrokerFaultTracker tracker_;
};

TEST_F(BrokerFaultTrackerTest, RoundRobinWhileNothingFailed) {
  std::vector<MessageQueue> queues = TwoBrokers();
  for (uint64_t start = 0; start < 8; ++start) {
    EXPECT_EQ(tracker_.Pick(queues, start, ""), queues[start % 4]);
  }
  EXPECT_FALSE(tracker_.Pick({}, 0, "").has_value());
}

TEST_F(BrokerFaultTrackerTest, AFailedBrokerIsAvoidedUntilItsIsolationEnds) {
  tracker_.Failed("broker-b");
  for (uint64_t start = 0; start < 8; ++start) EXPECT_EQ(BrokerPicked(start), "broker-a");
  // The queue after the skipped ones, in route order: broker-a's first.
  EXPECT_EQ(tracker_.Pick(TwoBrokers(), 2, ""), (MessageQueue{"t", "broker-a", 0}));
  now_ += seconds(29);
  EXPECT_TRUE(tracker_.Isolated("broker-b"));
  EXPECT_EQ(BrokerPicked(2), "broker-a");
  now_ += seconds(1);
  EXPECT_FALSE(tracker_.Isolated("broker-b"));
  EXPECT_EQ(BrokerPicked(2), "broker-b");
}

TEST_F(BrokerFaultTrackerTest, RepeatedFailuresDoubleTheIsolationUpToTheCap) {
  const std::vector<seconds> expected = {seconds(30), seconds(60), seconds(120), seconds(120)};
  for (seconds isolation : expected) {
    tracker_.Failed("broker-b");
    now_ += isolation - seconds(1);
    EXPECT_TRUE(tracker_.Isolated("broker-b")) << isolation.count();
    now_ += seconds(1);
    EXPECT_FALSE(tracker_.Isolated("broker-b")) << isolation.count();
  }
}

TEST_F(BrokerFaultTrackerTest, AFailureLongAfterTheLastStartsOver) {
  tracker_.Failed("broker-b");
  now_ += seconds(30);
  tracker_.Failed("broker-b");  // 60 s
  now_ += seconds(60) + seconds(120);
  tracker_.Failed("broker-b");
  now_ += seconds(30);
  EXPECT_FALSE(tracker_.Isolated("broker-b"));
}

TEST_F(BrokerFaultTrackerTest, ASuccessClearsTheIsolation) {
  tracker_.Failed("broker-b");
  now_ += seconds(30);
  tracker_.Failed("broker-b");
  tracker_.Succeeded("broker-b");
  EXPECT_FALSE(tracker_.Isolated("broker-b"));
  EXPECT_EQ(BrokerPicked(2), "broker-b");
  tracker_.Failed("broker-b");  // a fresh fault: 30 s again, not 120 s
  now_ += seconds(30);
  EXPECT_FALSE(tracker_.Isolated("broker-b"));
}

TEST_F(BrokerFaultTrackerTest, TheBrokerThatJustFailedIsAvoidedForTheRetry) {
  // Refused messages do not isolate, but the retry still goes elsewhere.
  EXPECT_EQ(BrokerPicked(0, "broker-a"), "broker-b");
  EXPECT_EQ(BrokerPicked(2, "broker-b"), "broker-a");
  // Unless the other broker is isolated: then the same broker again.
  tracker_.Failed("broker-b");
  EXPECT_EQ(BrokerPicked(0, "broker-a"), "broker-a");
}

TEST_F(BrokerFaultTrackerTest, WhenAllAreIsolatedTheLeastRecentlyFailedIsTried) {
  tracker_.Failed("broker-b");
  now_ += seconds(5);
  tracker_.Failed("broker-a");
  for (uint64_t start = 0; start < 4; ++start) EXPECT_EQ(BrokerPicked(start), "broker-b");
  now_ += seconds(5);
  tracker_.Failed("broker-b");  // b failed again: now a failed longest ago
  for (uint64_t start = 0; start < 4; ++start) EXPECT_EQ(BrokerPicked(start), "broker-a");
  // The rotation among the chosen broker's queues is kept.
  EXPECT_EQ(tracker_.Pick(TwoBrokers(), 1, ""), (MessageQueue{"t", "broker-a", 1}));
}

TEST_F(BrokerFaultTrackerTest, AnAttemptGetsHalfTheTimeOnlyWhileAnotherBrokerCanTakeTheRetry) {
  const milliseconds remaining(3000);
  EXPECT_EQ(tracker_.AttemptTimeout(TwoBrokers(), "broker-b", remaining), milliseconds(1500));
  // A single-broker route keeps the whole deadline.
  const std::vector<MessageQueue> one = {{"t", "broker-a", 0}, {"t", "broker-a", 1}};
  EXPECT_EQ(tracker_.AttemptTimeout(one, "broker-a", remaining), remaining);
  // So does a broker whose only alternative is isolated.
  tracker_.Failed("broker-b");
  EXPECT_EQ(tracker_.AttemptTimeout(TwoBrokers(), "broker-a", remaining), remaining);
  EXPECT_EQ(tracker_.AttemptTimeout(TwoBrokers(), "broker-b", remaining), milliseconds(1500));
}

}  // namespace
}  // namespace export_center::rocketmq
