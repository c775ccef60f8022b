#include "common/time_format.h"

#include <gtest/gtest.h>

namespace export_center {
namespace {

TEST(FormatIsoMillis, EpochAndAnOrdinaryTime) {
  EXPECT_EQ(FormatIsoMillis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIsoMillis(1714552200123), "2024-05-01T08:30:00.123Z");
}

TEST(FormatIsoMillis, MillisecondsAreNeverRoundedUp) {
  EXPECT_EQ(FormatIsoMillis(999), "1970-01-01T00:00:00.999Z");
  EXPECT_EQ(FormatIsoMillis(1999), "1970-01-01T00:00:01.999Z");
  EXPECT_EQ(FormatIsoMillis(1000), "1970-01-01T00:00:01.000Z");
  EXPECT_EQ(FormatIsoMillis(1714552200001), "2024-05-01T08:30:00.001Z");
}

// Truncating division would put -1 ms in 1970 with a millisecond field of
// "-01": the second is the floor, the remainder positive.
TEST(FormatIsoMillis, TimesBefore1970FloorToTheEarlierSecond) {
  EXPECT_EQ(FormatIsoMillis(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIsoMillis(-999), "1969-12-31T23:59:59.001Z");
  EXPECT_EQ(FormatIsoMillis(-1000), "1969-12-31T23:59:59.000Z");
  EXPECT_EQ(FormatIsoMillis(-1001), "1969-12-31T23:59:58.999Z");
  EXPECT_EQ(FormatIsoMillis(-86400000), "1969-12-31T00:00:00.000Z");
}

TEST(FormatIsoMillis, FourDigitYearsAtBothEnds) {
  EXPECT_EQ(FormatIsoMillis(253402300799999), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIsoMillis(-62135596800000), "0001-01-01T00:00:00.000Z");
}

}  // namespace
}  // namespace export_center
