#include "common/periodic_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "common/thread_guard.h"

namespace export_center {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using Next = PeriodicWorker::Next;

int64_t FailuresOf(const std::string& name) {
  for (const auto& [n, count] : ThreadFailureCounts()) {
    if (n == name) return count;
  }
  return -1;
}

// Waits up to 5 s for `done`.
template <typename F>
bool Eventually(F done) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return done();
}

TEST(PeriodicWorker, RunsAtOnceThenEveryInterval) {
  std::atomic<int> rounds{0};
  PeriodicWorker worker({"t.pw_every", milliseconds(50)}, [&] {
    ++rounds;
    return Next::Interval();
  });
  const auto started = Clock::now();
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return rounds >= 1; }));
  EXPECT_LT(Clock::now() - started, milliseconds(45)) << "the first round runs at once";
  ASSERT_TRUE(Eventually([&] { return rounds >= 4; }));
  // Three intervals between round 1 and round 4.
  EXPECT_GE(Clock::now() - started, milliseconds(150));
  worker.Stop();
}

TEST(PeriodicWorker, WaitFirstWaitsOneIntervalBeforeTheFirstRound) {
  std::atomic<int> rounds{0};
  PeriodicWorker worker({"t.pw_first", milliseconds(100), PeriodicWorker::FirstRound::kAfterWait},
                        [&] {
                          ++rounds;
                          return Next::Interval();
                        });
  const auto started = Clock::now();
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return rounds >= 1; }));
  EXPECT_GE(Clock::now() - started, milliseconds(100));
  worker.Stop();
}

TEST(PeriodicWorker, WakeEndsTheWaitAtOnce) {
  std::atomic<int> rounds{0};
  PeriodicWorker worker({"t.pw_wake", std::chrono::hours(1)}, [&] {
    ++rounds;
    return Next::Interval();
  });
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return rounds == 1; }));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(rounds, 1) << "the interval is an hour";
  const auto woken = Clock::now();
  worker.Wake();
  ASSERT_TRUE(Eventually([&] { return rounds == 2; }));
  EXPECT_LT(Clock::now() - woken, milliseconds(1000));
  worker.Stop();
}

TEST(PeriodicWorker, WakeDuringARoundIsNotLost) {
  std::atomic<int> rounds{0};
  PeriodicWorker* self = nullptr;
  PeriodicWorker worker({"t.pw_wake_in", std::chrono::hours(1)}, [&] {
    if (++rounds == 1) self->Wake();  // as a commit that lands while a round runs
    return Next::Interval();
  });
  self = &worker;
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return rounds == 2; }));
  worker.Stop();
}

TEST(PeriodicWorker, RoundDecidesTheNextWaitOrTheEnd) {
  std::atomic<int> rounds{0};
  PeriodicWorker worker({"t.pw_next", std::chrono::hours(1)}, [&] {
    const int n = ++rounds;
    if (n < 3) return Next::Now();                    // a full batch: again at once
    if (n < 5) return Next::After(milliseconds(10));  // a wait of its own
    return Next::Finish();
  });
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return rounds == 5; }));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(rounds, 5) << "Finish ends the thread";
  worker.Stop();
}

TEST(PeriodicWorker, StopEndsAWaitPromptlyAndJoins) {
  std::atomic<int> rounds{0};
  PeriodicWorker worker({"t.pw_stop", std::chrono::hours(1)}, [&] {
    ++rounds;
    return Next::Interval();
  });
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return rounds == 1; }));
  const auto stopping = Clock::now();
  worker.Stop();
  EXPECT_LT(Clock::now() - stopping, milliseconds(500));
  EXPECT_TRUE(worker.Stopping());
  EXPECT_EQ(rounds, 1) << "no round after Stop";
  worker.Stop();  // idempotent
}

TEST(PeriodicWorker, StopWaitsForTheRoundInProgressWhichSeesStopping) {
  std::atomic<bool> in_round{false};
  std::atomic<bool> saw_stopping{false};
  PeriodicWorker* self = nullptr;
  PeriodicWorker worker({"t.pw_long", milliseconds(10)}, [&] {
    in_round = true;
    while (!self->Stopping()) std::this_thread::sleep_for(milliseconds(1));
    saw_stopping = true;
    return Next::Interval();
  });
  self = &worker;
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return in_round.load(); }));
  worker.Stop();
  EXPECT_TRUE(saw_stopping) << "Stop joined before the round ended";
}

TEST(PeriodicWorker, RestartsAfterStop) {
  std::atomic<int> rounds{0};
  PeriodicWorker worker({"t.pw_again", std::chrono::hours(1)}, [&] {
    ++rounds;
    return Next::Interval();
  });
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return rounds == 1; }));
  worker.Stop();
  worker.Start();
  ASSERT_TRUE(Eventually([&] { return rounds == 2; }));
  EXPECT_FALSE(worker.Stopping());
  worker.Stop();
}

TEST(PeriodicWorker, ARoundThatThrowsIsContainedAndTheLoopGoesOn) {
  std::atomic<int> rounds{0};
  PeriodicWorker worker({"t.pw_throw", milliseconds(10)}, [&]() -> Next {
    if (++rounds == 2) throw std::runtime_error("round two breaks");
    return Next::Interval();
  });
  worker.Start();
  // The guard counts the throw, backs off 100 ms and runs the loop again.
  ASSERT_TRUE(Eventually([&] { return rounds >= 4; }));
  EXPECT_EQ(FailuresOf("t.pw_throw"), 1);
  worker.Stop();
}

}  // namespace
}  // namespace export_center
