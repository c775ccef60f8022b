// Runs a function on a thread with a stack of a chosen size: the tests of the
// nesting bound (docs/fuzzing.md#nesting) show the deepest accepted input is
// walked well inside a stack far smaller than any thread the center starts.
#pragma once

#include <gtest/gtest.h>
#include <pthread.h>

#include <cstddef>

namespace export_center::test_support {

template <class F>
void RunOnStackOf(size_t bytes, F f) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  pthread_t thread;
  auto body = [](void* p) -> void* {
    (*static_cast<F*>(p))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, body, &f), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
}

}  // namespace export_center::test_support
