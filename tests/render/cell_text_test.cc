#include "render/cell_text.h"

#include <gtest/gtest.h>

#include <random>

#include "render/writer.h"

namespace export_center::render {
namespace {

using namespace internal;  // NOLINT: the functions under test

TEST(GuardFormula, PrefixesFormulaStarts) {
  EXPECT_EQ(GuardFormula("=1+1"), "'=1+1");
  EXPECT_EQ(GuardFormula("+1"), "'+1");
  EXPECT_EQ(GuardFormula("-1"), "'-1");
  EXPECT_EQ(GuardFormula("@A1"), "'@A1");
  EXPECT_EQ(GuardFormula("\tx"), "'\tx");
  EXPECT_EQ(GuardFormula("\rx"), "'\rx");
  EXPECT_EQ(GuardFormula("a=1"), "a=1");
  EXPECT_EQ(GuardFormula(" =1"), " =1");
  EXPECT_EQ(GuardFormula(""), "");
}

TEST(CleanText, KeepsCleanTextWithoutCopy) {
  std::string scratch;
  const std::string text = "上海 tab\tnl\ncr\r 😀";
  EXPECT_EQ(CleanText(text, &scratch).data(), text.data());
}

TEST(CleanText, DropsForbiddenAndReplacesInvalid) {
  std::string scratch;
  EXPECT_EQ(CleanText(std::string("a\0b\x01\x1f"
                                  "c",
                                  6),
                      &scratch),
            "abc");
  EXPECT_EQ(CleanText("x\xEF\xBF\xBEy\xEF\xBF\xBFz", &scratch), "xyz");    // U+FFFE, U+FFFF
  EXPECT_EQ(CleanText("\xC0\xAF", &scratch), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(CleanText("\xED\xA0\x80", &scratch), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(CleanText("ok\xE4\xB8", &scratch), "ok\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
}

// The cached offset must agree with a full cctz conversion everywhere,
// including around DST transitions and far in the past and future.
TEST(LocalClock, AgreesWithCctz) {
  for (const char* name :
       {"Asia/Shanghai", "America/New_York", "Europe/London", "Australia/Lord_Howe", "UTC"}) {
    LocalClock clock;
    ASSERT_TRUE(clock.Init(name).ok());
    cctz::time_zone tz;
    ASSERT_TRUE(cctz::load_time_zone(name, &tz));
    std::mt19937_64 rng(1);
    int64_t ms = -5000000000000;                       // 1811
    while (ms < 5000000000000) {                       // 2128
      ms += static_cast<int64_t>(rng() % 2000000000);  // sorted walk, like real exports
      int64_t days, ms_of_day;
      clock.Split(ms, &days, &ms_of_day);
      const auto tp =
          std::chrono::time_point_cast<cctz::seconds>(std::chrono::system_clock::from_time_t(0)) +
          cctz::seconds(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
      const cctz::civil_second cs = cctz::convert(tp, tz);
      ASSERT_EQ(days, civil::DaysFromYmd(cs.year(), cs.month(), cs.day())) << name << " " << ms;
      ASSERT_EQ(ms_of_day / 1000, cs.hour() * 3600 + cs.minute() * 60 + cs.second())
          << name << " " << ms;
    }
  }
  LocalClock bad;
  EXPECT_EQ(bad.Init("No/Such_Zone").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace export_center::render
