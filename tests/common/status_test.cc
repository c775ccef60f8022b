#include "common/status.h"

#include <gtest/gtest.h>

#include <string>

#include "common/ids.h"
#include "failing_random.h"  // beside this test

namespace export_center {
namespace {

StatusOr<std::string> Failed() { return NotFound("task 42 is gone"); }

TEST(StatusOrDeathTest, ValueOnAnErrorAbortsWithTheStatusInEveryBuild) {
  // NDEBUG is set in this build (RelWithDebInfo): the check is not an assert.
  EXPECT_DEATH((void)Failed().value(),
               "StatusOr::value\\(\\) on an error: NotFound: task 42 is gone");
  EXPECT_DEATH((void)*Failed(), "task 42 is gone");
}

TEST(StatusOr, ValueOfASuccessIsTheValue) {
  StatusOr<std::string> ok = std::string("x");
  EXPECT_EQ(ok.value(), "x");
}

TEST(SecureRandomBytes, ReportsAFailingRandomSource) {
  unsigned char bytes[16];
  EXPECT_TRUE(SecureRandomBytes(bytes, sizeof bytes));
  testing::FailingRandom broken;
  EXPECT_FALSE(SecureRandomBytes(bytes, sizeof bytes));
}

TEST(NewUuidDeathTest, StopsWhenTheRandomSourceFails) {
  EXPECT_DEATH(
      {
        testing::FailingRandom broken;
        (void)NewUuid();
      },
      "random source failed");
}

}  // namespace
}  // namespace export_center
