// ReadAhead: one call ahead of the caller, in order, and nothing started
// after the caller stops.

#include "common/read_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace export_center {
namespace {

using std::chrono::milliseconds;

// Waits up to five seconds for `done`.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 5000 && !done(); ++i) std::this_thread::sleep_for(milliseconds(1));
  return done();
}

TEST(ReadAheadTest, ResultsComeInOrder) {
  int next = 0;  // the worker's only
  ReadAhead<int> ahead([&]() -> StatusOr<int> { return next++; });
  ahead.Start();
  for (int i = 0; i < 50; ++i) {
    StatusOr<int> got = ahead.Take();
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, i);
    ahead.Start();
  }
}

TEST(ReadAheadTest, TheNextCallRunsWhileTheCallerWorks) {
  std::atomic<int> calls{0};
  ReadAhead<int> ahead([&]() -> StatusOr<int> { return ++calls; });
  ahead.Start();
  ASSERT_EQ(*ahead.Take(), 1);
  ahead.Start();
  // The caller has not asked for the second result yet: it runs anyway.
  EXPECT_TRUE(Eventually([&] { return calls.load() == 2; }));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(calls.load(), 2) << "never more than one call ahead";
  EXPECT_EQ(*ahead.Take(), 2);
}

TEST(ReadAheadTest, ErrorsPassThrough) {
  ReadAhead<int> ahead([]() -> StatusOr<int> { return Unavailable("replica down"); });
  ahead.Start();
  StatusOr<int> got = ahead.Take();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
}

TEST(ReadAheadTest, AThrowingCallIsAnInternalErrorAndTheWorkerLivesOn) {
  int calls = 0;  // the worker's only
  ReadAhead<int> ahead([&]() -> StatusOr<int> {
    if (++calls == 1) throw std::runtime_error("bad row");
    return calls;
  });
  ahead.Start();
  StatusOr<int> got = ahead.Take();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInternal);
  EXPECT_NE(got.status().message().find("thread read_ahead"), std::string::npos);
  EXPECT_NE(got.status().message().find("bad row"), std::string::npos);
  ahead.Start();
  EXPECT_EQ(*ahead.Take(), 2);
}

TEST(ReadAheadTest, DestroyingWaitsForTheCallInFlightAndStartsNoMore) {
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  {
    ReadAhead<int> ahead([&]() -> StatusOr<int> {
      ++started;
      std::this_thread::sleep_for(milliseconds(100));
      return ++finished;
    });
    ahead.Start();
    ASSERT_TRUE(Eventually([&] { return started.load() == 1; }));
  }  // the caller stops with the call still running
  EXPECT_EQ(finished.load(), 1) << "the destructor waited for it";
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(started.load(), 1);
}

TEST(ReadAheadTest, NeverStartedIsDestroyedAtOnce) {
  bool called = false;
  {
    ReadAhead<int> ahead([&]() -> StatusOr<int> { return called = true, 1; });
  }
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace export_center
