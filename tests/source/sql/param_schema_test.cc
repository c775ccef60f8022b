// The declared parameters against the definition's
// (docs/sql-template-route.md#declared-parameters).
#include "source/sql/param_schema.h"

#include <gtest/gtest.h>

#include "common/utf8.h"

namespace export_center::source {
namespace {

using nlohmann::json;

std::vector<registry::ParameterSpec> Definition() {
  return {{"status", "STRING", "状态", false, {"NEW", "PAID"}},
          {"dateFrom", "DATE", "开始日期", false, {}},
          {"customerCodes", "STRING_LIST", "客户编码", false, {}}};
}

TEST(ParamSchemaTest, AbsentOrEmptyDeclaresNothing) {
  for (const json& none : {json(), json::object()}) {
    auto declared = ParseParamSchema(none);
    ASSERT_TRUE(declared.ok()) << declared.status().ToString();
    EXPECT_TRUE(declared->empty());
    auto undeclared = CheckParamSchema(none, Definition());
    ASSERT_TRUE(undeclared.ok());
    EXPECT_TRUE(undeclared->empty());
  }
}

TEST(ParamSchemaTest, FewerThanTheDefinitionAgrees) {
  json schema = {{"parameters",
                  {{{"name", "status"}, {"type", "STRING"}, {"allowed", {"NEW"}}},
                   {{"name", "customerCodes"}, {"type", "string_list"}, {"title", "客户"}}}}};
  auto undeclared = CheckParamSchema(schema, Definition());
  ASSERT_TRUE(undeclared.ok()) << undeclared.status().ToString();
  EXPECT_TRUE(undeclared->empty());
}

TEST(ParamSchemaTest, AnotherTypeDisagreesAndAnUnknownNameIsAdvice) {
  std::vector<DeclaredParameter> declared = {
      {"keyword", "STRING"}, {"status", "STRING"}, {"dateFrom", "DATETIME"}};
  ParamSchemaReview review = ReviewParamSchema(declared, Definition());
  EXPECT_EQ(review.disagreements,
            (std::vector<std::string>{
                "parameter dateFrom is DATETIME to the service but DATE in the definition"}));
  EXPECT_EQ(review.undeclared,
            (std::vector<std::string>{
                "the service reads parameter keyword, which the definition does not declare"}));
}

TEST(ParamSchemaTest, EveryDisagreementIsNamedInDeclaredOrder) {
  json schema = {{"parameters",
                  {{{"name", "customerCodes"}, {"type", "STRING"}},
                   {{"name", "keyword"}, {"type", "STRING"}},
                   {{"name", "dateFrom"}, {"type", "DATETIME"}}}}};
  auto checked = CheckParamSchema(schema, Definition());
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(checked.status().message(),
            "contract paramSchema disagrees with the definition's parameters: parameter "
            "customerCodes is STRING to the service but STRING_LIST in the definition; "
            "parameter dateFrom is DATETIME to the service but DATE in the definition");
}

TEST(ParamSchemaTest, OnlyUnknownNamesIsNoErrorButReturnsThem) {
  json schema = {{"parameters", {{{"name", "orderNoPrefix"}, {"type", "STRING"}}}}};
  auto undeclared = CheckParamSchema(schema, Definition());
  ASSERT_TRUE(undeclared.ok()) << undeclared.status().ToString();
  EXPECT_EQ(*undeclared, (std::vector<std::string>{"the service reads parameter orderNoPrefix, "
                                                   "which the definition does not declare"}));
}

TEST(ParamSchemaTest, ManyFindingsAreCountedAndLongNamesCut) {
  // A service's text ends in a failure message and log lines: bounded there.
  std::vector<DeclaredParameter> declared;
  for (int i = 0; i < 8; ++i) declared.push_back({"extra" + std::to_string(i), "STRING"});
  declared.push_back({std::string(300, 'n') + "名", "STRING"});
  ParamSchemaReview review = ReviewParamSchema(declared, Definition());
  ASSERT_EQ(review.undeclared.size(), 6u);
  EXPECT_EQ(review.undeclared[4],
            "the service reads parameter extra4, which the definition does not declare");
  EXPECT_EQ(review.undeclared[5], "and 4 more");

  std::vector<DeclaredParameter> long_one = {{std::string(300, 'n') + "名", "STRING"}};
  std::string finding = ReviewParamSchema(long_one, Definition()).undeclared.at(0);
  EXPECT_LT(finding.size(), 140u) << finding;
  EXPECT_TRUE(utf8::IsValid(finding));
}

TEST(ParamSchemaTest, MalformedShapesAreNamed) {
  struct Case {
    json schema;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {json::array(), R"(paramSchema is not {"parameters":[…]})"},
           {{{"day", {{"type", "DATE"}}}}, R"(paramSchema is not {"parameters":[…]})"},
           {{{"parameters", "status"}}, R"(paramSchema is not {"parameters":[…]})"},
           {{{"parameters", {7}}}, "paramSchema.parameters[0] is not an object"},
           {{{"parameters", {{{"name", ""}, {"type", "DATE"}}}}},
            "paramSchema.parameters[0] has no name"},
           {{{"parameters", {{{"name", "day"}}}}}, "paramSchema.parameters[0] (day) has no type"},
       }) {
    auto parsed = ParseParamSchema(c.schema);
    ASSERT_FALSE(parsed.ok()) << c.schema.dump();
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), c.message) << c.schema.dump();
  }
}

}  // namespace
}  // namespace export_center::source
