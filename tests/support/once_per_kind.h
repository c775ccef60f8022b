#pragma once
// One throwaway server (or database) per kind for a whole test binary,
// started and seeded on first use. A kind that failed to start answers the
// same reason to every later test instead of being started again.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "tests/support/server_process.h"

namespace export_center::testing {

template <class T>
class OncePerKind {
 public:
  using Starter = std::function<StatusOr<std::unique_ptr<T>>()>;

  // The started `kind`, or nullptr with the reason in *why.
  T* Get(const std::string& kind, const Starter& start, std::string* why) {
    if (auto it = started_.find(kind); it != started_.end()) return it->second.get();
    if (auto it = failed_.find(kind); it == failed_.end()) {
      StatusOr<std::unique_ptr<T>> made = start();
      if (made.ok()) return (started_[kind] = std::move(made).value()).get();
      failed_[kind] = made.status().ToString();
    }
    *why = failed_[kind];
    return nullptr;
  }

 private:
  std::map<std::string, std::unique_ptr<T>> started_;
  std::map<std::string, std::string> failed_;
};

}  // namespace export_center::testing

// In a fixture's SetUp, after Get: a real server that is missing fails the
// test where the test command installs every server (RealServersRequired)
// and skips it on a developer's machine without the packages.
#define EC_REQUIRE_REAL_SERVER(started, what, why)           \
  do {                                                       \
    if ((started) == nullptr) {                              \
      if (::export_center::testing::RealServersRequired()) { \
        FAIL() << (what) << " unavailable in CI: " << (why); \
      }                                                      \
      GTEST_SKIP() << (what) << " unavailable: " << (why);   \
    }                                                        \
  } while (0)
