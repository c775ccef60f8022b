#include "usecase/parameters.h"

#include <gtest/gtest.h>

namespace export_center::usecase {
namespace {

using json = nlohmann::json;

registry::ExportDefinition Def() {
  registry::ExportDefinition d;
  d.name = "CUSTOMER_LIST";
  d.parameters = {
      {"keyword", "STRING", "Keyword", false, {}},
      {"status", "STRING", "Status", false, {"ACTIVE", "INACTIVE"}},
      {"minOrders", "INTEGER", "Min orders", false, {}},
      {"vip", "BOOLEAN", "VIP", false, {}},
      {"since", "DATE", "Since", false, {}},
      {"tags", "STRING_LIST", "Tags", false, {"A", "B", "C"}},
      {"filter", "OBJECT", "Filter", false, {}},
  };
  for (int i = 0; i < 25; ++i)
    d.parameters.push_back({"k" + std::to_string(i), "STRING", "", false, {}});
  return d;
}

StatusOr<std::string> Check(const json& params) {
  return CanonicalParameters(params, Def(), task::LimitsOptions{});
}

TEST(Parameters, CanonicalFormSortsKeysAndDropsNulls) {
  auto a = Check(json::parse(R"({"status":"ACTIVE","keyword":"柏悦","vip":null})"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, R"({"keyword":"柏悦","status":"ACTIVE"})");
  auto b = Check(json::parse(R"({"keyword":"柏悦","status":"ACTIVE"})"));
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*Check(json()), "{}");
  EXPECT_EQ(*Check(json::object()), "{}");
}

TEST(Parameters, MustBeAnObject) {
  EXPECT_FALSE(Check(json::array()).ok());
  EXPECT_FALSE(Check("x").ok());
  EXPECT_FALSE(Check(1).ok());
}

TEST(Parameters, DepthCountsTheParametersObjectAsOne) {
  EXPECT_TRUE(Check(json::parse(R"({"filter":{"a":1}})")).ok());
  EXPECT_TRUE(Check(json::parse(R"({"tags":["A","B"]})")).ok());
  EXPECT_FALSE(Check(json::parse(R"({"filter":{"a":{"b":1}}})")).ok());
  EXPECT_FALSE(Check(json::parse(R"({"filter":{"a":[1]}})")).ok());
  EXPECT_FALSE(Check(json::parse(R"({"filter":[[1]]})")).ok());
}

TEST(Parameters, AtMostTwentyKeysOverAllLevels) {
  json twenty = json::object();
  for (int i = 0; i < 20; ++i) twenty["k" + std::to_string(i)] = "v";
  EXPECT_TRUE(Check(twenty).ok());
  json twenty_one = twenty;
  twenty_one["k20"] = "v";
  auto r = Check(twenty_one);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("20 keys"), std::string::npos);
  json nested = json::object();
  for (int i = 0; i < 19; ++i) nested["k" + std::to_string(i)] = "v";
  nested["filter"] = {{"x", 1}};  // 19 + filter + x = 21
  EXPECT_FALSE(Check(nested).ok());
}

TEST(Parameters, StringsAreCountedInCharacters) {
  EXPECT_TRUE(Check({{"keyword", std::string(256, 'a')}}).ok());
  EXPECT_FALSE(Check({{"keyword", std::string(257, 'a')}}).ok());
  std::string chinese;
  for (int i = 0; i < 256; ++i) chinese += "客";  // 768 bytes, 256 characters
  EXPECT_TRUE(Check({{"keyword", chinese}}).ok());
  EXPECT_FALSE(Check({{"keyword", chinese + "客"}}).ok());
  EXPECT_FALSE(Check({{"filter", {{"x", std::string(257, 'a')}}}}).ok());
}

TEST(Parameters, JsonSizeIsCapped) {
  json big = json::object();
  for (int i = 0; i < 17; ++i) big["k" + std::to_string(i)] = std::string(250, 'x');
  auto r = Check(big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("4096"), std::string::npos);
}

TEST(Parameters, UndeclaredKeysAreRefused) {
  auto r = Check({{"provider_url", "http://evil"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("provider_url"), std::string::npos);
}

TEST(Parameters, TypesAndAllowedValues) {
  EXPECT_FALSE(Check({{"status", "DELETED"}}).ok());
  EXPECT_FALSE(Check({{"status", 1}}).ok());
  EXPECT_TRUE(Check({{"minOrders", 5}}).ok());
  EXPECT_TRUE(Check({{"minOrders", "-12"}}).ok());
  EXPECT_FALSE(Check({{"minOrders", 1.5}}).ok());
  EXPECT_FALSE(Check({{"minOrders", "12a"}}).ok());
  EXPECT_TRUE(Check({{"vip", true}}).ok());
  EXPECT_FALSE(Check({{"vip", "true"}}).ok());
  EXPECT_TRUE(Check({{"since", "2024-02-29"}}).ok());
  EXPECT_FALSE(Check({{"since", "2023-02-29"}}).ok());
  EXPECT_FALSE(Check({{"since", "2024-13-01"}}).ok());
  EXPECT_TRUE(Check({{"tags", {"A", "C"}}}).ok());
  EXPECT_FALSE(Check({{"tags", {"A", "Z"}}}).ok());
  EXPECT_FALSE(Check({{"tags", {"A", 1}}}).ok());
}

TEST(Parameters, RequiredParameters) {
  registry::ExportDefinition d = Def();
  d.parameters[0].required = true;
  EXPECT_FALSE(CanonicalParameters(json::object(), d, task::LimitsOptions{}).ok());
  EXPECT_FALSE(CanonicalParameters({{"keyword", nullptr}}, d, task::LimitsOptions{}).ok());
  EXPECT_TRUE(CanonicalParameters({{"keyword", "x"}}, d, task::LimitsOptions{}).ok());
}

}  // namespace
}  // namespace export_center::usecase
