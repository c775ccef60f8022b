#include "task/language.h"

#include <gtest/gtest.h>

#include "task/task.h"

namespace export_center::task {
namespace {

TEST(ChooseLanguage, ExactThenPrimarySubtagThenDefaultThenFirst) {
  const std::vector<std::string_view> tags = {"zh-CN", "en", "ja-JP"};
  EXPECT_EQ(ChooseLanguage(tags, {"en", "zh-CN"}), 1u);
  EXPECT_EQ(ChooseLanguage(tags, {"ZH-cn", "en"}), 0u);
  EXPECT_EQ(ChooseLanguage(tags, {"en-GB", "zh-CN"}), 1u);
  EXPECT_EQ(ChooseLanguage(tags, {"ja", "zh-CN"}), 0u);  // "ja" is no primary of ja-JP's
  EXPECT_EQ(ChooseLanguage(tags, {"fr", "ja-JP"}), 2u);
  EXPECT_EQ(ChooseLanguage(tags, {"fr", "en-AU"}), 1u);  // the default's primary subtag
  EXPECT_EQ(ChooseLanguage(tags, {"", ""}), 0u);
  EXPECT_EQ(ChooseLanguage(tags, {"", "en"}), 1u);  // no locale: the definition's default
}

TEST(LocalizedText, PlainTextIsTheSameInEveryLanguage) {
  EXPECT_EQ(LocalizedText::Plain("合计").In({"en", "zh-CN"}), "合计");
  LocalizedText t{{{"zh-CN", "合计"}, {"en", "Total"}}};
  EXPECT_EQ(t.In({"en-US", ""}), "Total");
  EXPECT_EQ(t.In({"", "zh-CN"}), "合计");
  EXPECT_EQ(LocalizedText().In({"en", ""}), "");
}

TEST(IsLocaleTag, AcceptsBcp47ShapedTags) {
  EXPECT_TRUE(IsLocaleTag("zh-Hans-CN"));
  EXPECT_TRUE(IsLocaleTag("en"));
  EXPECT_FALSE(IsLocaleTag(""));
  EXPECT_FALSE(IsLocaleTag("-en"));
  EXPECT_FALSE(IsLocaleTag("en_US"));
  EXPECT_FALSE(IsLocaleTag(std::string(36, 'a')));
}

}  // namespace
}  // namespace export_center::task
