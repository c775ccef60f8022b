// Template safety of the sql-template route: the parameters `${}` may not
// read, the parameters templates are rendered with, and the check of every
// template of a contract (docs/sql-template.md#what--may-read).

#include "source/sql/template_safety.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace export_center::source {
namespace {

using nlohmann::json;

TEST(UntrustedParametersTest, FreeTextIsUntrustedAndTheRestIsCheckedByValue) {
  std::vector<registry::ParameterSpec> specs = {
      {"status", "STRING", "", false, {"NEW", "PAID"}},
      {"codes", "STRING_LIST", "", false, {"A", "B"}},
      {"keyword", "STRING", "", false, {}},
      {"tags", "STRING_LIST", "", false, {}},
      {"minId", "INTEGER", "", false, {}},
      {"paid", "BOOLEAN", "", false, {}},
      {"from", "DATE", "", false, {}},
  };
  using S = std::set<std::string>;
  // Free text is untrusted even when the task does not give it.
  EXPECT_EQ(UntrustedParameters(json::object(), specs), (S{"keyword", "tags"}));
  EXPECT_EQ(UntrustedParameters(json{{"status", "PAID"},
                                     {"codes", {"A", "B"}},
                                     {"minId", 7},
                                     {"paid", true},
                                     {"from", "2024-02-29"}},
                                specs),
            (S{"keyword", "tags"}));
  // Values are checked again at run time, not trusted from create time.
  EXPECT_EQ(UntrustedParameters(json{{"status", "PAID' OR '1'='1"},
                                     {"codes", {"A", "x'"}},
                                     {"minId", "7"},
                                     {"from", "2024-02-29' --"},
                                     {"undeclared", "x"},
                                     {"undeclaredNumber", 3}},
                                specs),
            (S{"codes", "from", "keyword", "minId", "status", "tags", "undeclared"}));
  // Server-bound values are never untrusted, whatever a definition declares.
  std::vector<registry::ParameterSpec> odd = {{"tenantId", "STRING", "", false, {}}};
  EXPECT_EQ(UntrustedParameters(json{{"tenantId", "t1"}, {"requestedBy", "u1"}}, odd), S{});
}

TEST(TemplateParametersTest, ServerSideIdentityOverridesUserKeys) {
  auto p = TemplateParameters(R"({"tenantId":"evil","appCode":"X","status":"NEW"})", "t1",
                              task::AppCode::kMerchant, "u1");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)["tenantId"], "t1");
  EXPECT_EQ((*p)["appCode"], "MERCHANT");
  EXPECT_EQ((*p)["requestedBy"], "u1");
  EXPECT_EQ((*p)["status"], "NEW");
  EXPECT_FALSE(TemplateParameters("[1]", "t1", task::AppCode::kPlatform, "u").ok());
}

TEST(EnrichUntrustedTest, AddsThePageKeysToTheMainTemplatesNames) {
  EXPECT_EQ(EnrichUntrusted({"keyword"}), (std::set<std::string>{"keys", "keyword"}));
  EXPECT_EQ(EnrichUntrusted({}), (std::set<std::string>{"keys"}));
}

SqlContract ContractWith(std::string sql, std::vector<EnrichSqlDef> enrich = {}) {
  SqlContract contract;
  contract.sql_template = std::move(sql);
  contract.enrich_sqls = std::move(enrich);
  return contract;
}

TEST(FindUnsafeTemplateUseTest, NamesTheTemplateWhoseDollarReadsAnUntrustedValue) {
  const std::set<std::string> untrusted = {"keyword"};
  auto clean = FindUnsafeTemplateUse(
      ContractWith("SELECT id FROM orders WHERE name = #{keyword} ORDER BY ${sort}"), untrusted);
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();
  EXPECT_FALSE(clean->has_value());

  auto main = FindUnsafeTemplateUse(
      ContractWith("SELECT id FROM orders WHERE name LIKE '${keyword}'"), untrusted);
  ASSERT_TRUE(main.ok()) << main.status().ToString();
  ASSERT_TRUE(main->has_value());
  EXPECT_EQ((*main)->where, "sqlTemplate");
  EXPECT_NE((*main)->message.find("keyword"), std::string::npos) << (*main)->message;

  // An enrich SQL may not put the page's keys into ${}, though the main
  // template's untrusted names do not include them.
  EnrichSqlDef group{
      "customer", "customer_id", "SELECT id, name FROM customers WHERE id IN (${keys})", {"name"}};
  auto enrich = FindUnsafeTemplateUse(ContractWith("SELECT id FROM orders", {group}), untrusted);
  ASSERT_TRUE(enrich.ok()) << enrich.status().ToString();
  ASSERT_TRUE(enrich->has_value());
  EXPECT_EQ((*enrich)->where, "enrich group customer");
  EXPECT_NE((*enrich)->message.find("keys"), std::string::npos) << (*enrich)->message;
}

TEST(FindUnsafeTemplateUseTest, ATemplateThatDoesNotParseIsAnErrorNamingIt) {
  EnrichSqlDef group{"customer", "customer_id", "<script><if test=\"", {"name"}};
  auto found = FindUnsafeTemplateUse(ContractWith("SELECT id FROM orders", {group}), {});
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.status().message().find("enrich group customer"), std::string::npos)
      << found.status().ToString();
}

TEST(StripTrailingSemicolonTest, DropsTrailingSemicolonsAndSpaceOnly) {
  EXPECT_EQ(StripTrailingSemicolon("SELECT 1;  \n"), "SELECT 1");
  EXPECT_EQ(StripTrailingSemicolon("SELECT ';'"), "SELECT ';'");
}

}  // namespace
}  // namespace export_center::source
