#include "common/thread_guard.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/failpoint.h"

namespace export_center {
namespace {

int64_t FailuresOf(const std::string& name) {
  for (const auto& [n, count] : ThreadFailureCounts()) {
    if (n == name) return count;
  }
  return -1;  // never registered
}

TEST(ThreadGuard, LoopRestartsAThrowingBodyAndCountsEachThrow) {
  int runs = 0;
  const auto started = std::chrono::steady_clock::now();
  RunGuardedLoop("t.loop", [&] {
    if (++runs < 3) throw std::runtime_error("boom " + std::to_string(runs));
  });
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(FailuresOf("t.loop"), 2);
  // Back-off: 100 ms after the first throw, 200 ms after the second.
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(300));
}

TEST(ThreadGuard, LoopThatReturnsIsRegisteredAtZero) {
  RunGuardedLoop("t.quiet", [] {});
  EXPECT_EQ(FailuresOf("t.quiet"), 0);
}

TEST(ThreadGuard, NonStdExceptionIsCaughtToo) {
  int runs = 0;
  RunGuardedLoop("t.int", [&] {
    if (runs++ == 0) throw 42;
  });
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(FailuresOf("t.int"), 1);
  Status s = RunGuardedOnce("t.int_once", []() -> Status { throw 7; });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("not std::exception"), std::string::npos) << s.message();
}

TEST(ThreadGuard, OnceTurnsAnExceptionIntoInternal) {
  Status s = RunGuardedOnce("t.once", []() -> Status { throw std::logic_error("bad page"); });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("thread t.once"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("bad page"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("std::logic_error"), std::string::npos) << s.message();
  EXPECT_EQ(FailuresOf("t.once"), 1);

  StatusOr<int> v =
      RunGuardedOnce("t.once", []() -> StatusOr<int> { throw std::out_of_range("x"); });
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInternal);
  EXPECT_EQ(FailuresOf("t.once"), 2);

  StatusOr<int> fine = RunGuardedOnce("t.once", []() -> StatusOr<int> { return 5; });
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(*fine, 5);
  EXPECT_EQ(FailuresOf("t.once"), 2);
}

TEST(ThreadGuard, MessageOfInvalidUtf8StaysValidAndShort) {
  Status s = RunGuardedOnce(
      "t.utf8", []() -> Status { throw std::runtime_error(std::string(1000, 'a') + "\xE5\xB9"); });
  EXPECT_LT(s.message().size(), 600u);
  Status cut = RunGuardedOnce(
      "t.utf8", []() -> Status { throw std::runtime_error(std::string("2026\xE5\xB9 x")); });
  // Each invalid byte becomes U+FFFD.
  EXPECT_NE(cut.message().find("2026\xEF\xBF\xBD\xEF\xBF\xBD x"), std::string::npos)
      << cut.message();
}

TEST(ThreadGuard, StartedThreadIsNamedAndSurvivesAThrow) {
  std::atomic<int> runs{0};
  std::string name;
  std::thread t = StartGuardedThread("t.named_thread_long_name", [&] {
    char buf[32] = {};
    pthread_getname_np(pthread_self(), buf, sizeof buf);
    name = buf;
    if (runs++ == 0) throw std::runtime_error("first run");
  });
  t.join();
  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(name, std::string("t.named_thread_long_name").substr(0, 15));
  EXPECT_EQ(FailuresOf("t.named_thread_long_name"), 1);
}

TEST(ThreadGuard, FailpointThrowsOnceInTheNamedBody) {
  SetFailpointsForTest("thread.t.fp_loop, thread.t.fp_once,thread.t.fp_worker");
  int runs = 0;
  RunGuardedLoop("t.fp_loop", [&] { ++runs; });
  EXPECT_EQ(runs, 1);  // the failpoint threw before the first run
  EXPECT_EQ(FailuresOf("t.fp_loop"), 1);
  RunGuardedLoop("t.fp_loop", [&] { ++runs; });  // fired already
  EXPECT_EQ(FailuresOf("t.fp_loop"), 1);

  Status s = RunGuardedOnce("t.fp_once", [] { return Status::Ok(); });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("failpoint thread.t.fp_once"), std::string::npos) << s.message();
  EXPECT_TRUE(RunGuardedOnce("t.fp_once", [] { return Status::Ok(); }).ok());

  // A worker thread leaves the failpoint to the unit of work inside it.
  Status unit;
  std::thread w = StartWorkerThread(
      "t.fp_worker", [&] { unit = RunGuardedOnce("t.fp_worker", [] { return Status::Ok(); }); });
  w.join();
  EXPECT_EQ(unit.code(), StatusCode::kInternal);
  EXPECT_EQ(FailuresOf("t.fp_worker"), 1);
  SetFailpointsForTest("");
}

TEST(Failpoint, OffUnlessListed) {
  SetFailpointsForTest("a,,b ");
  EXPECT_FALSE(FailpointFires("c"));
  EXPECT_TRUE(FailpointFires("b"));
  EXPECT_FALSE(FailpointFires("b"));
  EXPECT_TRUE(FailpointFires("a"));
  SetFailpointsForTest("");
  EXPECT_FALSE(FailpointFires("a"));
}

size_t StackOfANewThread() {
  size_t size = 0;
  std::thread([&] {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstacksize(&attr, &size);
      pthread_attr_destroy(&attr);
    }
  }).join();
  return size;
}

void SetDefaultStack(size_t bytes) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_getattr_default_np(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  ASSERT_EQ(pthread_setattr_default_np(&attr), 0);
  pthread_attr_destroy(&attr);
}

// What `ulimit -s 256` would give every thread: raised to 8 MiB, the stack
// the nesting bound is measured against (docs/fuzzing.md#nesting); a larger
// default is kept.
TEST(RaiseDefaultThreadStack, GivesEveryNewThreadAtLeast8MiB) {
  SetDefaultStack(256 * 1024);
  EXPECT_LT(StackOfANewThread(), kMinThreadStackBytes);
  EXPECT_TRUE(RaiseDefaultThreadStack());
  EXPECT_GE(StackOfANewThread(), kMinThreadStackBytes);
  SetDefaultStack(16 << 20);
  EXPECT_TRUE(RaiseDefaultThreadStack());
  EXPECT_GE(StackOfANewThread(), size_t{16} << 20);
}

}  // namespace
}  // namespace export_center
