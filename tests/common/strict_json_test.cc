#include "common/strict_json.h"

#include <gtest/gtest.h>

#include <string>

namespace export_center {
namespace {

TEST(StrictJson, ParsesAnObject) {
  auto v = ParseStrictJson(R"({"a": 1, "b": [true, null, "x"], "c": {"d": 2.5}})");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["b"][2], "x");
}

TEST(StrictJson, RejectsDuplicateKeys) {
  auto v = ParseStrictJson(R"({"a": 1, "a": 2})");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("duplicate key"), std::string::npos);
}

TEST(StrictJson, RejectsDuplicateKeysInNestedObjects) {
  EXPECT_FALSE(ParseStrictJson(R"({"a": {"x": 1, "x": 1}})").ok());
  EXPECT_FALSE(ParseStrictJson(R"([{"x": 1}, {"y": 1, "y": 2}])").ok());
}

TEST(StrictJson, SameKeyInSiblingObjectsIsFine) {
  EXPECT_TRUE(ParseStrictJson(R"([{"x": 1}, {"x": 2}])").ok());
  EXPECT_TRUE(ParseStrictJson(R"({"a": {"x": 1}, "b": {"x": 2}})").ok());
}

TEST(StrictJson, RejectsNanInfinityAndOverflow) {
  EXPECT_FALSE(ParseStrictJson(R"({"a": NaN})").ok());
  EXPECT_FALSE(ParseStrictJson(R"({"a": Infinity})").ok());
  EXPECT_FALSE(ParseStrictJson(R"({"a": -Infinity})").ok());
  EXPECT_FALSE(ParseStrictJson(R"({"a": 1e400})").ok());
}

TEST(StrictJson, RejectsTrailingData) {
  EXPECT_FALSE(ParseStrictJson(R"({"a": 1} x)").ok());
  EXPECT_FALSE(ParseStrictJson(R"({"a": 1}{})").ok());
  EXPECT_TRUE(ParseStrictJson("{\"a\": 1}  \n").ok());
}

TEST(StrictJson, RejectsMalformedInput) {
  EXPECT_FALSE(ParseStrictJson("").ok());
  EXPECT_FALSE(ParseStrictJson("{").ok());
  EXPECT_FALSE(ParseStrictJson("{'a': 1}").ok());
  EXPECT_FALSE(ParseStrictJson(R"({"a": 1,})").ok());
  EXPECT_FALSE(ParseStrictJson("{\"a\": \"\xff\"}").ok());   // invalid UTF-8
  EXPECT_FALSE(ParseStrictJson(R"({"a": "\ud800"})").ok());  // lone surrogate
  EXPECT_FALSE(ParseStrictJson("{\"a\": \"x\ny\"}").ok());   // raw control char
}

TEST(StrictJson, IgnoresOneLeadingBom) {
  EXPECT_TRUE(ParseStrictJson("\xEF\xBB\xBF{\"a\": 1}").ok());
  EXPECT_FALSE(ParseStrictJson("{\"a\": 1}\xEF\xBB\xBF").ok());  // only a leading one
}

TEST(StrictJson, LimitsNesting) {
  std::string ok(kMaxJsonNesting, '['), deep(kMaxJsonNesting + 1, '[');
  ok += std::string(kMaxJsonNesting, ']');
  deep += std::string(kMaxJsonNesting + 1, ']');
  EXPECT_TRUE(ParseStrictJson(ok).ok());
  EXPECT_FALSE(ParseStrictJson(deep).ok());
  std::string bomb(60000, '[');
  EXPECT_FALSE(ParseStrictJson(bomb).ok());
}

// docs/fuzzing.md#nesting: the check every reader of outside JSON shares (common/nesting.h)
// at the API's tighter bound, a million levels refused with the clear words
// the 400 carries, before any tree exists.
TEST(StrictJson, AMillionLevelsAreRefusedClearly) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  auto parsed = ParseStrictJson("{\"parameters\": {\"a\": " + deep + "}}");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), "JSON nested deeper than 32 levels");
  EXPECT_EQ(ParseStrictJson(std::string(1000000, '{')).status().message(),
            "JSON nested deeper than 32 levels");
}

}  // namespace
}  // namespace export_center
