#include "common/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace export_center {
namespace {

using namespace std::chrono_literals;

struct Counter {
  Mutex mu;
  CondVar cv;
  int value GUARDED_BY(mu) = 0;
};

TEST(Mutex, MutexLockExcludesOtherThreads) {
  Counter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&counter] {
      for (int i = 0; i < 10000; ++i) {
        MutexLock lock(&counter.mu);
        ++counter.value;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  MutexLock lock(&counter.mu);
  EXPECT_EQ(counter.value, 40000);
}

TEST(CondVar, WaitReturnsAfterSignalWithTheLockHeld) {
  Counter counter;
  std::thread producer([&counter] {
    std::this_thread::sleep_for(20ms);
    MutexLock lock(&counter.mu);
    counter.value = 1;
    counter.cv.SignalAll();
  });
  {
    MutexLock lock(&counter.mu);
    while (counter.value == 0) counter.cv.Wait(&counter.mu);
    counter.value = 2;  // still held: the producer cannot interleave
  }
  producer.join();
  MutexLock lock(&counter.mu);
  EXPECT_EQ(counter.value, 2);
}

TEST(CondVar, WaitUntilReturnsFalseAtTheDeadline) {
  Counter counter;
  MutexLock lock(&counter.mu);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + 30ms;
  while (counter.value == 0 && counter.cv.WaitUntil(&counter.mu, deadline)) {
  }
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
  EXPECT_FALSE(counter.cv.WaitUntil(&counter.mu, start));  // already passed
}

TEST(CondVar, WaitUntilReturnsEarlyWhenSignalled) {
  Counter counter;
  std::thread producer([&counter] {
    std::this_thread::sleep_for(20ms);
    MutexLock lock(&counter.mu);
    counter.value = 1;
    counter.cv.Signal();
  });
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  {
    MutexLock lock(&counter.mu);
    while (counter.value == 0 && counter.cv.WaitUntil(&counter.mu, deadline)) {
    }
    EXPECT_EQ(counter.value, 1);
  }
  EXPECT_LT(std::chrono::steady_clock::now(), deadline);
  producer.join();
}

}  // namespace
}  // namespace export_center
