// The one nesting bound of every reader of outside data (common/nesting.h):
// the JSON text check, the parse built on it, the tree check pugixml trees
// go through, and the guard of a recursive-descent parser.
#include "common/nesting.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <string>

#include "common/json_dump.h"

namespace export_center {
namespace {

constexpr int kMillion = 1000000;

std::string Arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string Objects(int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += "{\"k\":";
  out += "1";
  out += std::string(depth, '}');
  return out;
}

TEST(CheckJsonNesting, AcceptsTheLimitAndRefusesOneLevelMore) {
  EXPECT_TRUE(CheckJsonNesting(Arrays(kMaxNesting)).ok());
  EXPECT_TRUE(CheckJsonNesting(Objects(kMaxNesting)).ok());
  const Status deep = CheckJsonNesting(Arrays(kMaxNesting + 1));
  EXPECT_EQ(deep.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(deep.message(), "JSON nested deeper than 64 levels");
  EXPECT_FALSE(CheckJsonNesting(Objects(kMaxNesting + 1)).ok());
  EXPECT_TRUE(CheckJsonNesting(Arrays(3), 3).ok());
  EXPECT_FALSE(CheckJsonNesting(Arrays(4), 3).ok());
}

TEST(CheckJsonNesting, AMillionLevelsAreRefusedInOnePass) {
  const std::string text = "{\"name\": " + Arrays(kMillion) + "}";
  const auto start = std::chrono::steady_clock::now();
  const Status s = CheckJsonNesting(text);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(s.message(), "JSON nested deeper than 64 levels");
  // Unclosed too: the check refuses before any parser has to find the end.
  EXPECT_FALSE(CheckJsonNesting(std::string(kMillion, '[')).ok());
  EXPECT_FALSE(CheckJsonNesting(std::string(kMillion, '{')).ok());
}

TEST(CheckJsonNesting, BracketsInsideStringsDoNotCount) {
  const std::string brackets(kMillion, '[');
  EXPECT_TRUE(CheckJsonNesting("{\"k\": \"" + brackets + "\"}").ok());
  EXPECT_TRUE(CheckJsonNesting("[\"" + brackets + "\", \"]]]]\"]").ok());
  // An escaped quote does not end the string, an escaped backslash does.
  EXPECT_TRUE(CheckJsonNesting("[\"\\\"" + brackets + "\"]").ok());
  EXPECT_FALSE(CheckJsonNesting("[\"\\\\\"" + brackets + "]").ok());
  EXPECT_TRUE(CheckJsonNesting("[\"a\\\\\\\"[[[[\"]", 1).ok());
}

TEST(CheckJsonNesting, CountsWhatTheParserCountsOnEveryPrefixItAccepts) {
  // The parser's own depth of each accepted text equals the check's verdict.
  for (const std::string& text :
       {std::string(R"({"a":[1,{"b":"[[[\"]"},[[]]],"c":{}})"), std::string(R"(["\\",[["x"]]])"),
        Arrays(kMaxNesting), Objects(kMaxNesting + 1), std::string("[]]]][[[[[[")}) {
    nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    if (parsed.is_discarded()) continue;
    int depth = 0, max = 0;
    [[maybe_unused]] nlohmann::json reparsed =
        nlohmann::json::parse(text, [&](int d, nlohmann::json::parse_event_t e, nlohmann::json&) {
          if (e == nlohmann::json::parse_event_t::object_start ||
              e == nlohmann::json::parse_event_t::array_start) {
            depth = d + 1;
            max = std::max(max, depth);
          }
          return true;
        });
    EXPECT_TRUE(CheckJsonNesting(text, max).ok()) << text;
    EXPECT_FALSE(CheckJsonNesting(text, max - 1).ok()) << text;
  }
}

TEST(ParseJsonWithin, RefusesDepthAndLeavesMalformedTextToTheCaller) {
  auto deep = ParseJsonWithin<nlohmann::json>(Arrays(kMillion));
  EXPECT_EQ(deep.status().message(), "JSON nested deeper than 64 levels");
  auto malformed = ParseJsonWithin<nlohmann::json>("{\"a\":");
  ASSERT_TRUE(malformed.ok());
  EXPECT_TRUE(malformed->is_discarded());
  auto fine = ParseJsonWithin<nlohmann::ordered_json>(R"({"b":1,"a":[[2]]})");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->dump(), R"({"b":1,"a":[[2]]})");
}

TEST(CheckTreeNesting, RefusesADeepXmlTreeWithoutRecursion) {
  std::string xml;
  for (int i = 0; i < kMillion; ++i) xml += "<a>";
  for (int i = 0; i < kMillion; ++i) xml += "</a>";
  pugi::xml_document doc;  // pugixml itself parses and frees without recursion
  ASSERT_TRUE(doc.load_buffer(xml.data(), xml.size()));
  EXPECT_EQ(CheckTreeNesting(doc.root(), "XML").message(), "XML nested deeper than 64 levels");
}

TEST(CheckTreeNesting, AcceptsTheLimitWithSiblingsAndText) {
  auto nested = [](int depth) {
    std::string xml;
    for (int i = 0; i < depth - 1; ++i) xml += "<a>x<b/>";
    xml += "<c/>";
    for (int i = 0; i < depth - 1; ++i) xml += "y</a>";
    return xml + "<d/>";
  };
  pugi::xml_document doc;
  // Element depth `depth`, a text node below the deepest <a> (depth `depth`
  // too), so the limit holds exactly.
  const std::string ok = nested(kMaxNesting);
  ASSERT_TRUE(doc.load_buffer(ok.data(), ok.size(), pugi::parse_default | pugi::parse_fragment));
  EXPECT_TRUE(CheckTreeNesting(doc.root(), "XML").ok());
  const std::string deep = nested(kMaxNesting + 1);
  ASSERT_TRUE(
      doc.load_buffer(deep.data(), deep.size(), pugi::parse_default | pugi::parse_fragment));
  EXPECT_FALSE(CheckTreeNesting(doc.root(), "XML").ok());
  pugi::xml_document empty;
  EXPECT_TRUE(CheckTreeNesting(empty.root(), "XML").ok());
}

TEST(NestingGuard, CountsLevelsAndLeavesThemOnUnwind) {
  int depth = 0;
  {
    NestingGuard one(&depth, 2);
    NestingGuard two(&depth, 2);
    EXPECT_TRUE(two.ok());
    NestingGuard three(&depth, 2);
    EXPECT_FALSE(three.ok());
    EXPECT_EQ(three.Refusal("expression").message(), "expression nested deeper than 2 levels");
  }
  EXPECT_EQ(depth, 0);
}

// Why the bound is enough (docs/fuzzing.md#nesting): the recursive walks of a
// tree at the limit — nlohmann's dump, copy and comparison — fit in a 64 KiB
// stack, a 128th of the 8 MiB every thread of the center gets.
void* DumpAtTheLimit(void* out) {
  auto parsed = ParseJsonWithin<nlohmann::json>(Objects(kMaxNesting));
  nlohmann::json copy = *parsed;
  *static_cast<bool*>(out) =
      parsed.ok() && copy == *parsed && DumpTolerant(copy).size() == Objects(kMaxNesting).size();
  return nullptr;
}

TEST(NestingBound, TheDeepestAcceptedValueIsWalkedOnA64KiBStack) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 64 * 1024), 0);
  bool walked = false;
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, DumpAtTheLimit, &walked), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_TRUE(walked);
}

}  // namespace
}  // namespace export_center
