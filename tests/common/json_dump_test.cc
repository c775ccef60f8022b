#include "common/json_dump.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/utf8.h"

namespace export_center {
namespace {

// The SSE poller's old crash (docs/conventions.md#threads): dump() throws type_error.316 on a
// string that is not UTF-8; DumpTolerant writes U+FFFD and never throws.
TEST(DumpTolerant, WritesInvalidBytesAsReplacementCharacters) {
  nlohmann::json task = {{"failureMessage", "value \"2026\xE5\xB9\" is not a DATE"}};
  EXPECT_THROW(task.dump(), nlohmann::json::type_error);
  std::string text;
  ASSERT_NO_THROW(text = DumpTolerant(task));
  EXPECT_TRUE(utf8::IsValid(text));
  EXPECT_EQ(text, "{\"failureMessage\":\"value \\\"2026\xEF\xBF\xBD\\\" is not a DATE\"}");
  EXPECT_EQ(nlohmann::json::parse(text)["failureMessage"],
            "value \"2026\xEF\xBF\xBD\" is not a DATE");
}

TEST(DumpTolerant, ValidTextIsWrittenAsDumpWritesIt) {
  nlohmann::json value = {{"name", "客户列表 😀"}, {"n", 3}, {"list", {1, "a\tb"}}};
  EXPECT_EQ(DumpTolerant(value), value.dump());
  EXPECT_EQ(DumpTolerant(value, 2), value.dump(2));
}

TEST(DumpTolerant, TakesOrderedJsonToo) {
  nlohmann::ordered_json value = {{"z", "\xFF"}, {"a", 1}};
  EXPECT_EQ(DumpTolerant(value), "{\"z\":\"\xEF\xBF\xBD\",\"a\":1}");
}

}  // namespace
}  // namespace export_center
