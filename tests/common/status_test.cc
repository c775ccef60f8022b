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

TEST(Status, AQuotedValueFollowsItsContextAndIsReplacedWhole) {
  const Status bad = InvalidArgument("column x: value \"1\" is not 8601")
                         .WithQuotedValue("x", std::string("column x: value ").size(), 3);
  ASSERT_TRUE(bad.quoted_value());
  const Status in_row = bad.WithContext("row 1");
  ASSERT_TRUE(in_row.quoted_value());
  EXPECT_EQ(in_row.quoted_value()->column, "x");
  EXPECT_EQ(in_row.WithoutQuotedValue("[withheld]").message(),
            "row 1: column x: value [withheld] is not 8601");
  EXPECT_FALSE(in_row.WithoutQuotedValue("[withheld]").quoted_value());
  EXPECT_EQ(in_row.WithoutQuotedValue("[withheld]").code(), StatusCode::kInvalidArgument);
  // Nothing recorded: nothing replaced; a range outside the message is not recorded.
  EXPECT_EQ(InvalidArgument("a 1").WithoutQuotedValue("?").message(), "a 1");
  EXPECT_FALSE(InvalidArgument("a").WithQuotedValue("x", 0, 2).quoted_value());
  EXPECT_FALSE(Status::Ok().WithQuotedValue("x", 0, 0).quoted_value());
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
