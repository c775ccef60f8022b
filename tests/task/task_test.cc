#include "task/task.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace export_center::task {
namespace {

using S = TaskState;
constexpr S kAll[] = {S::kPending,   S::kRunning, S::kSucceeded, S::kFailed,
                      S::kCancelled, S::kExpired, S::kStale,     S::kInconsistent};

TEST(TaskState, NamesRoundTrip) {
  for (S s : kAll) EXPECT_EQ(ParseTaskState(ToString(s)), s);
  EXPECT_FALSE(ParseTaskState("pending"));
  EXPECT_FALSE(ParseTaskState("DOWNLOADED"));
}

TEST(TaskState, TransitionsMatchTheLifecycleDiagram) {
  const std::set<std::pair<S, S>> allowed = {
      {S::kPending, S::kRunning},   {S::kPending, S::kCancelled},
      {S::kPending, S::kFailed},  // quarantine of a poison command
      {S::kRunning, S::kSucceeded}, {S::kRunning, S::kPending},
      {S::kRunning, S::kFailed},    {S::kRunning, S::kCancelled},
      {S::kRunning, S::kStale},     {S::kRunning, S::kInconsistent},
      {S::kSucceeded, S::kExpired}, {S::kFailed, S::kPending},
      {S::kCancelled, S::kPending}, {S::kInconsistent, S::kPending},
  };
  for (S from : kAll) {
    for (S to : kAll) {
      EXPECT_EQ(IsAllowedTransition(from, to), allowed.count({from, to}) == 1)
          << ToString(from) << " -> " << ToString(to);
    }
  }
}

TEST(TaskState, ExpiredIsTerminal) {
  for (S to : kAll) EXPECT_FALSE(IsAllowedTransition(S::kExpired, to));
}

TEST(TaskState, ActiveAndManualRetry) {
  for (S s : kAll) {
    EXPECT_EQ(IsActive(s), s == S::kPending || s == S::kRunning) << ToString(s);
    // Not STALE: it is exported again as a new task (docs/task-lifecycle.md#manual-retry).
    bool retry = s == S::kFailed || s == S::kCancelled || s == S::kInconsistent;
    EXPECT_EQ(CanManualRetry(s), retry) << ToString(s);
    // A manual retry is exactly an allowed edge back to PENDING from a final state.
    if (retry) {
      EXPECT_TRUE(IsAllowedTransition(s, S::kPending));
    }
  }
}

TEST(FileFormat, NamesExtensionsContentTypes) {
  EXPECT_EQ(ParseFileFormat("XLSX"), FileFormat::kXlsx);
  EXPECT_EQ(ParseFileFormat("CSV"), FileFormat::kCsv);
  EXPECT_FALSE(ParseFileFormat("xlsx"));
  EXPECT_FALSE(ParseFileFormat("PDF"));
  EXPECT_EQ(FileExtension(FileFormat::kXlsx), "xlsx");
  EXPECT_EQ(FileExtension(FileFormat::kCsv), "csv");
  EXPECT_EQ(ToString(FileFormat::kCsv), "CSV");
  EXPECT_NE(ContentType(FileFormat::kCsv).find("text/csv"), std::string_view::npos);
}

TEST(AppCode, Names) {
  EXPECT_EQ(ParseAppCode("PLATFORM"), AppCode::kPlatform);
  EXPECT_EQ(ParseAppCode("MERCHANT"), AppCode::kMerchant);
  EXPECT_FALSE(ParseAppCode("platform"));
  EXPECT_EQ(ToString(AppCode::kMerchant), "MERCHANT");
}

TEST(Locale, TheShapeOfALanguageTag) {
  for (const char* good :
       {"en", "zh-CN", "zh-Hant-TW", "es-419", "en-US-x-twain", "EN-us", "abcdefgh-12345678"}) {
    EXPECT_TRUE(IsLocaleTag(good)) << good;
  }
  const std::string longest = "en-" + std::string(8, 'a') + "-" + std::string(8, 'b') + "-" +
                              std::string(8, 'c') + "-abcde";  // 35 characters
  ASSERT_EQ(longest.size(), kMaxLocaleLength);
  EXPECT_TRUE(IsLocaleTag(longest));
  for (const std::string& bad :
       std::vector<std::string>{"", "e", "1en", "en-", "-en", "en--US", "zh_CN", "en US",
                                "en-abcdefghi", "中文", "en;q=0.9", "en\n", longest + "a"}) {
    EXPECT_FALSE(IsLocaleTag(bad)) << bad;
  }
}

}  // namespace
}  // namespace export_center::task
