// Runs the `sql render` command function on temporary files.
#include "source/sql/sql_template/sql_render_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace export_center::sql_template {
namespace {

class SqlRenderCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sql_render_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }

  int Run(const std::string& t, const std::string& p, const std::set<std::string>& untrusted = {}) {
    out_.str("");
    err_.str("");
    return RunSqlRender(t, p, untrusted, out_, err_);
  }

  std::filesystem::path dir_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(SqlRenderCommandTest, PrintsOneJsonObject) {
  std::string t = Write("t.xml",
                        "<script>SELECT * FROM orders <where><if test=\"status != null\">AND "
                        "status = #{status}</if><if test=\"ids != null\">AND id IN <foreach "
                        "collection=\"ids\" item=\"id\" open=\"(\" separator=\",\" close=\")\">"
                        "#{id}</foreach></if></where></script>\n");
  std::string p = Write("p.json", R"({"status": "PAID", "ids": [1, 2]})");
  ASSERT_EQ(Run(t, p), 0) << err_.str();
  auto j = nlohmann::json::parse(out_.str());
  // Fragments inside <where> are joined with a space, as in MyBatis 3.6
  // (3.5 gave "status = ?AND id IN (?,?)").
  EXPECT_EQ(j["sql"], "SELECT * FROM orders  WHERE  status = ? AND id IN  (  ? , ? )");
  EXPECT_EQ(j["bindings"], nlohmann::json::parse(R"(["PAID", 1, 2])"));
  EXPECT_TRUE(err_.str().empty());
  EXPECT_EQ(out_.str().find('\n'), out_.str().size() - 1);  // one line
}

TEST_F(SqlRenderCommandTest, EmptyParamsFileIsAnEmptyObject) {
  std::string t = Write("t.sql", "\xEF\xBB\xBFSELECT 1 WHERE a = #{a}");
  std::string p = Write("p.json", "");
  ASSERT_EQ(Run(t, p), 0) << err_.str();
  auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["sql"], "SELECT 1 WHERE a = ?");
  EXPECT_EQ(j["bindings"], nlohmann::json::parse("[null]"));
}

TEST_F(SqlRenderCommandTest, BadTemplateExitsNonZeroWithPosition) {
  std::string t = Write("t.xml", "<script>SELECT 1\n<bogus/></script>");
  std::string p = Write("p.json", "{}");
  EXPECT_NE(Run(t, p), 0);
  EXPECT_TRUE(out_.str().empty());
  EXPECT_NE(err_.str().find("Unknown element <bogus>"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("line 2"), std::string::npos) << err_.str();
}

TEST_F(SqlRenderCommandTest, BadParamsAndMissingFiles) {
  std::string t = Write("t.sql", "SELECT 1");
  EXPECT_NE(Run(t, Write("p.json", "{nope")), 0);
  EXPECT_NE(err_.str().find("not valid JSON"), std::string::npos);
  EXPECT_NE(Run((dir_ / "missing.xml").string(), Write("q.json", "{}")), 0);
  EXPECT_NE(err_.str().find("cannot open"), std::string::npos);
}

TEST_F(SqlRenderCommandTest, DollarOverAnUntrustedNameExitsNonZeroNamingIt) {
  std::string t = Write("t.xml",
                        "<script>SELECT * FROM ${table} <where>tenant_id = #{tenantId}"
                        "<if test=\"kw != null\">AND note LIKE '%${kw}%'</if></where></script>");
  std::string p = Write("p.json", R"({"table": "orders", "tenantId": "t1", "kw": "x"})");
  EXPECT_NE(Run(t, p, {"kw", "other"}), 0);
  EXPECT_TRUE(out_.str().empty());
  EXPECT_NE(err_.str().find("${kw}"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("untrusted parameter 'kw'"), std::string::npos) << err_.str();
  // The same template renders when only other keys are untrusted: ${table} is fine.
  ASSERT_EQ(Run(t, p, {"tenantId"}), 0) << err_.str();
  EXPECT_EQ(nlohmann::json::parse(out_.str())["sql"],
            "SELECT * FROM orders  WHERE tenant_id = ? AND note LIKE '%x%'");
}

}  // namespace
}  // namespace export_center::sql_template
