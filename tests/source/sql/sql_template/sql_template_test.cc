// Engine tests derived from MyBatis's documented behaviour and its
// DynamicSqlSourceTest: whitespace is compared exactly where MyBatis's
// output is known, so regressions in joining/trimming show up.
#include "source/sql/sql_template/sql_template.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <set>
#include <string>
#include <vector>

#include "tests/support/small_stack.h"

namespace export_center::sql_template {
namespace {

using Json = nlohmann::ordered_json;

RenderedSql MustRender(std::string_view tpl, const Json& params = Json::object()) {
  auto r = RenderTemplate(tpl, params);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : RenderedSql{};
}

std::string ErrorOf(std::string_view tpl, const Json& params = Json::object()) {
  auto r = RenderTemplate(tpl, params);
  EXPECT_FALSE(r.ok()) << "rendered: " << (r.ok() ? r->sql : "");
  return r.ok() ? "" : r.status().message();
}

// Collapses runs of whitespace, as a conformance check comparing normalised
// SQL would.
std::string Squash(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

TEST(SqlTemplate, PlainTextBindsHashParameters) {
  auto r = MustRender("SELECT * FROM t WHERE id = #{id} AND name = #{name,jdbcType=VARCHAR}",
                      Json{{"id", 7}, {"name", "x"}});
  EXPECT_EQ(r.sql, "SELECT * FROM t WHERE id = ? AND name = ?");
  ASSERT_EQ(r.bindings.size(), 2u);
  EXPECT_EQ(r.bindings[0], 7);
  EXPECT_EQ(r.bindings[1], "x");
}

TEST(SqlTemplate, MissingParameterBindsNull) {
  auto r = MustRender("SELECT #{nope}, #{a.b.c}", Json{{"a", nullptr}});
  ASSERT_EQ(r.bindings.size(), 2u);
  EXPECT_TRUE(r.bindings[0].is_null());
  EXPECT_TRUE(r.bindings[1].is_null());
}

TEST(SqlTemplate, NestedPropertyAndIndexPaths) {
  Json p = {{"user", {{"name", "bob"}, {"tags", {"a", "b"}}}}};
  auto r = MustRender("SELECT #{user.name}, #{user.tags[1]}", p);
  EXPECT_EQ(r.bindings[0], "bob");
  EXPECT_EQ(r.bindings[1], "b");
}

TEST(SqlTemplate, OldStyleJdbcTypeAndUnknownOption) {
  EXPECT_EQ(MustRender("SELECT #{x:VARCHAR}", Json{{"x", 1}}).sql, "SELECT ?");
  EXPECT_NE(ErrorOf("SELECT #{x,foo=bar}").find("invalid property 'foo'"), std::string::npos);
  EXPECT_NE(ErrorOf("SELECT #{x,jdbcType=NOPE}").find("jdbcType"), std::string::npos);
}

TEST(SqlTemplate, DollarSubstitutionStringifiesAndNullIsEmpty) {
  auto r = MustRender("SELECT * FROM ${table} ORDER BY ${col} ${dir}",
                      Json{{"table", "orders"}, {"col", "id"}, {"dir", nullptr}});
  EXPECT_EQ(r.sql, "SELECT * FROM orders ORDER BY id");  // dynamic plain text is trimmed
  EXPECT_EQ(MustRender("${d} ${i} ${b}", Json{{"d", 1.5}, {"i", 3}, {"b", true}}).sql,
            "1.5 3 true");
  EXPECT_EQ(MustRender("${d}", Json{{"d", 1e10}}).sql, "1.0E10");
}

TEST(SqlTemplate, EscapedTokensStayLiteral) {
  EXPECT_EQ(MustRender("SELECT '\\#{x}'").sql, "SELECT '#{x}'");
  EXPECT_EQ(MustRender("SELECT 'open #{x'").sql, "SELECT 'open #{x'");
}

TEST(SqlTemplate, OgnlInDollarWithEscapedBrace) {
  // DynamicSqlSourceTest.shouldHandleOgnlExpression.
  EXPECT_EQ(MustRender("Expression test: ${name.indexOf('v')} / "
                       "${name in {'Bob', 'Steve'\\} ? 'yes' : 'no'}.",
                       Json{{"name", "Steve"}})
                .sql,
            "Expression test: 3 / yes.");
}

TEST(SqlTemplate, StaticPlainTextKeepsItsWhitespace) {
  EXPECT_EQ(MustRender("SELECT 1\n").sql, "SELECT 1\n");
}

TEST(SqlTemplate, IfIncludesOnTruthyTest) {
  const char* tpl =
      "<script>SELECT * FROM BLOG<if test=\"id != null\"> WHERE ID = #{id}</if></script>";
  EXPECT_EQ(MustRender(tpl, Json{{"id", 1}}).sql, "SELECT * FROM BLOG  WHERE ID = ?");
  EXPECT_EQ(MustRender(tpl).sql, "SELECT * FROM BLOG");
}

TEST(SqlTemplate, MyBatisTruthiness) {
  const char* tpl = "<script>x<if test=\"v\">Y</if></script>";
  EXPECT_EQ(MustRender(tpl, Json{{"v", true}}).sql, "x Y");
  EXPECT_EQ(MustRender(tpl, Json{{"v", false}}).sql, "x");
  EXPECT_EQ(MustRender(tpl, Json{{"v", 0}}).sql, "x");
  EXPECT_EQ(MustRender(tpl, Json{{"v", 0.0}}).sql, "x");
  EXPECT_EQ(MustRender(tpl, Json{{"v", 2}}).sql, "x Y");
  EXPECT_EQ(MustRender(tpl, Json{{"v", ""}}).sql, "x Y");       // non-null string
  EXPECT_EQ(MustRender(tpl, Json{{"v", "false"}}).sql, "x Y");  // still a non-null string
  EXPECT_EQ(MustRender(tpl, Json{{"v", Json::array()}}).sql, "x Y");
  EXPECT_EQ(MustRender(tpl, Json{{"v", nullptr}}).sql, "x");
  EXPECT_EQ(MustRender(tpl).sql, "x");
}

TEST(SqlTemplate, OgnlEmptyStringEqualsZeroGotcha) {
  // OGNL compares 0 with '' as doubles: 0 == 0.0, so the filter is dropped.
  const char* tpl = "<script>x<if test=\"s != null and s != ''\">Y</if></script>";
  EXPECT_EQ(MustRender(tpl, Json{{"s", 0}}).sql, "x");
  EXPECT_EQ(MustRender(tpl, Json{{"s", 1}}).sql, "x Y");
  EXPECT_EQ(MustRender(tpl, Json{{"s", ""}}).sql, "x");
  EXPECT_EQ(MustRender(tpl, Json{{"s", "a"}}).sql, "x Y");
}

TEST(SqlTemplate, SingleCharLiteralIsACharacter) {
  // test="x == 'A'": 'A' is a Character, so a String "A" is compared as a
  // number and OGNL throws NumberFormatException; "A" in double quotes works.
  EXPECT_NE(ErrorOf("<script><if test=\"x == 'A'\">Y</if></script>", Json{{"x", "A"}})
                .find("NumberFormatException"),
            std::string::npos);
  EXPECT_EQ(MustRender("<script>x<if test='x == \"A\"'>Y</if></script>", Json{{"x", "A"}}).sql,
            "x Y");
  EXPECT_EQ(MustRender("<script>x<if test=\"x == 'AB'\">Y</if></script>", Json{{"x", "AB"}}).sql,
            "x Y");
  // '1' is char 49, not the string "1".
  EXPECT_EQ(MustRender("<script>x<if test=\"x == '1'\">Y</if></script>", Json{{"x", "1"}}).sql,
            "x");
}

TEST(SqlTemplate, ChooseWhenOtherwise) {
  const char* tpl =
      "<script>SELECT * FROM BLOG <choose>"
      "<when test=\"a\">WHERE A = #{a}</when>"
      "<when test=\"b\">WHERE B = #{b}</when>"
      "<otherwise>WHERE CATEGORY = 'DEFAULT'</otherwise></choose></script>";
  auto first = MustRender(tpl, Json{{"a", 1}, {"b", 2}});
  EXPECT_EQ(Squash(first.sql), "SELECT * FROM BLOG WHERE A = ?");
  EXPECT_EQ(first.bindings, std::vector<nlohmann::json>{1});
  EXPECT_EQ(Squash(MustRender(tpl, Json{{"b", 2}}).sql), "SELECT * FROM BLOG WHERE B = ?");
  EXPECT_EQ(Squash(MustRender(tpl).sql), "SELECT * FROM BLOG WHERE CATEGORY = 'DEFAULT'");
}

TEST(SqlTemplate, TooManyOtherwise) {
  EXPECT_NE(ErrorOf("<script><choose><otherwise>a</otherwise><otherwise>b</otherwise></choose>"
                    "</script>")
                .find("Too many default"),
            std::string::npos);
}

TEST(SqlTemplate, WhereStripsLeadingAndOr) {
  const char* tpl =
      "<script>SELECT * FROM BLOG<where><if test=\"id != null\">   and ID = #{id}  </if>"
      "<if test=\"name != null\">   or NAME = #{name}  </if></where></script>";
  EXPECT_EQ(MustRender(tpl, Json{{"id", 1}}).sql, "SELECT * FROM BLOG WHERE  ID = ?");
  EXPECT_EQ(MustRender(tpl, Json{{"name", "n"}}).sql, "SELECT * FROM BLOG WHERE  NAME = ?");
  // The fragments are joined with a space, as in MyBatis 3.6's
  // shouldTrimWHEREInsteadOfANDForBothConditions (3.5 had one space less).
  EXPECT_EQ(MustRender(tpl, Json{{"id", 1}, {"name", "n"}}).sql,
            "SELECT * FROM BLOG WHERE  ID = ?      or NAME = ?");
  EXPECT_EQ(MustRender(tpl).sql, "SELECT * FROM BLOG");
}

TEST(SqlTemplate, WhereStripsAndBeforeNewlineAndTab) {
  EXPECT_EQ(MustRender("<script>SELECT 1<where>   AND\n ID = 1</where></script>").sql,
            "SELECT 1 WHERE \n ID = 1");
  EXPECT_EQ(MustRender("<script>SELECT 1<where>   or\t ID = 1</where></script>").sql,
            "SELECT 1 WHERE \t ID = 1");
  // "ANDROID" is a column, not AND + space.
  EXPECT_EQ(MustRender("<script>SELECT 1<where>ANDROID = 1</where></script>").sql,
            "SELECT 1 WHERE ANDROID = 1");
}

TEST(SqlTemplate, SetStripsCommas) {
  const char* tpl =
      "<script>UPDATE BLOG<set><if test=\"a\"> ID = #{a}, </if><if test=\"b\"> NAME = #{b}, </if>"
      "</set></script>";
  // MyBatis 3.6's shouldTrimSETInsteadOfCOMMAForBothConditions.
  EXPECT_EQ(MustRender(tpl, Json{{"a", 1}, {"b", 2}}).sql, "UPDATE BLOG SET ID = ?,   NAME = ?");
  EXPECT_EQ(MustRender("<script>UPDATE BLOG<set><if test=\"false\">ID = ?</if>"
                       "<if test=\"true\">, NAME = ?</if></set></script>")
                .sql,
            "UPDATE BLOG SET  NAME = ?");
  EXPECT_EQ(MustRender(tpl).sql, "UPDATE BLOG");
}

TEST(SqlTemplate, TrimWithPipeSeparatedOverrides) {
  const char* tpl =
      "<script>SELECT * FROM t <trim prefix=\"WHERE (\" suffix=\")\" prefixOverrides=\"and |or \" "
      "suffixOverrides=\",|AND\">OR a = 1 and</trim></script>";
  EXPECT_EQ(MustRender(tpl).sql, "SELECT * FROM t  WHERE (  a = 1  )");
  // An empty body gets neither prefix nor suffix.
  EXPECT_EQ(MustRender("<script>SELECT 1 <trim prefix=\"WHERE\" suffix=\"X\"> <if test=\"false\">"
                       "a</if> </trim></script>")
                .sql,
            "SELECT 1");
}

TEST(SqlTemplate, ForEachOverListBindsEachItemInOrder) {
  const char* tpl =
      "<script>SELECT * FROM t WHERE id IN <foreach collection=\"ids\" item=\"id\" open=\"(\" "
      "separator=\",\" close=\")\">#{id}</foreach></script>";
  auto r = MustRender(tpl, Json{{"ids", {3, 1, 2}}});
  EXPECT_EQ(Squash(r.sql), "SELECT * FROM t WHERE id IN ( ? , ? , ? )");
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{3, 1, 2}));
}

TEST(SqlTemplate, ForEachMatchesMyBatisWhitespace) {
  // DynamicSqlSourceTest.shouldIterateOnceForEachItemInCollection.
  const char* tpl =
      "<script>SELECT * FROM BLOG WHERE ID in<foreach collection=\"array\" index=\"index\" "
      "item=\"item\" open=\"(\" close=\")\" separator=\"AND\">${item} = #{item}</foreach></script>";
  auto r = MustRender(tpl, Json{{"array", {"one", "two", "three"}}});
  EXPECT_EQ(r.sql, "SELECT * FROM BLOG WHERE ID in (  one = ? AND two = ? AND three = ? )");
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{"one", "two", "three"}));
}

TEST(SqlTemplate, ForEachNestedPropertiesAndIndex) {
  const char* tpl =
      "<script>VALUES <foreach collection=\"rows\" item=\"r\" index=\"i\" separator=\",\">"
      "(#{i}, #{r.name}, #{r.tags[0]})</foreach></script>";
  Json p = {{"rows", {{{"name", "a"}, {"tags", {"x"}}}, {{"name", "b"}, {"tags", {"y"}}}}}};
  auto r = MustRender(tpl, p);
  EXPECT_EQ(Squash(r.sql), "VALUES (?, ?, ?) , (?, ?, ?)");
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{0, "a", "x", 1, "b", "y"}));
}

TEST(SqlTemplate, ForEachOverMapUsesKeyAsIndexInDocumentOrder) {
  const char* tpl =
      "<script>SELECT * FROM t WHERE <foreach collection=\"filters\" index=\"k\" item=\"v\" "
      "separator=\" AND \">${k} = #{v}</foreach></script>";
  Json p = Json::parse(R"({"filters": {"zeta": 1, "alpha": "x"}})");
  auto r = MustRender(tpl, p);
  EXPECT_EQ(Squash(r.sql), "SELECT * FROM t WHERE zeta = ? AND alpha = ?");
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{1, "x"}));
}

TEST(SqlTemplate, ForEachEmptySkipsOpenAndClose) {
  const char* tpl =
      "<script>SELECT * FROM BLOG<foreach collection=\"array\" item=\"item\" "
      "open=\"WHERE id in (\" close=\")\" separator=\",\">#{item}</foreach></script>";
  auto r = MustRender(tpl, Json{{"array", Json::array()}});
  EXPECT_EQ(r.sql, "SELECT * FROM BLOG");
  EXPECT_TRUE(r.bindings.empty());
}

TEST(SqlTemplate, ForEachNullCollectionIsAnErrorUnlessNullable) {
  std::string err =
      ErrorOf("<script>SELECT 1\n  <foreach collection=\"ids\" item=\"x\">#{x}</foreach></script>");
  EXPECT_NE(err.find("The expression 'ids' evaluated to a null value."), std::string::npos);
  EXPECT_NE(err.find("line 2"), std::string::npos) << err;
  EXPECT_EQ(MustRender("<script>SELECT 1 <foreach collection=\"ids\" item=\"x\" nullable=\"true\">"
                       "#{x}</foreach></script>")
                .sql,
            "SELECT 1");
}

TEST(SqlTemplate, ForEachItemDoesNotLeakAfterTheLoop) {
  const char* tpl =
      "<script><foreach collection=\"ids\" item=\"id\">#{id}</foreach> #{id}</script>";
  auto r = MustRender(tpl, Json{{"ids", {1, 2}}, {"id", 9}});
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{1, 2, 9}));
}

TEST(SqlTemplate, ForEachSeparatorSkipsEmptyIterations) {
  const char* tpl =
      "<script>SELECT <foreach collection=\"xs\" item=\"x\" separator=\",\">"
      "<if test=\"x > 1\">#{x}</if></foreach></script>";
  auto r = MustRender(tpl, Json{{"xs", {1, 2, 3}}});
  EXPECT_EQ(Squash(r.sql), "SELECT ? , ?");
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{2, 3}));
}

TEST(SqlTemplate, BindCreatesAVariable) {
  const char* tpl =
      "<script><bind name=\"pattern\" value=\"'%' + name + '%'\"/>"
      "SELECT * FROM t WHERE name LIKE #{pattern}</script>";
  auto r = MustRender(tpl, Json{{"name", "bo"}});
  EXPECT_EQ(r.sql, "SELECT * FROM t WHERE name LIKE ?");
  EXPECT_EQ(r.bindings, std::vector<nlohmann::json>{"%bo%"});
}

TEST(SqlTemplate, BindInsideForEachIsPerIteration) {
  const char* tpl =
      "<script><foreach collection=\"xs\" item=\"x\" separator=\",\">"
      "<bind name=\"p\" value=\"x + '%'\"/>#{p}</foreach></script>";
  auto r = MustRender(tpl, Json{{"xs", {"a", "b"}}});
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{"a%", "b%"}));
}

TEST(SqlTemplate, NestedIfAndSizeChecks) {
  const char* tpl =
      "<script>SELECT * FROM t<where>"
      "<if test=\"q != null\"><if test=\"q.name != null and q.name.length() > 0\">AND name = "
      "#{q.name}</if><if test=\"q.ids != null and q.ids.size() > 0\"> AND id IN <foreach "
      "collection=\"q.ids\" item=\"i\" open=\"(\" separator=\",\" close=\")\">#{i}</foreach>"
      "</if></if></where></script>";
  auto r = MustRender(tpl, Json{{"q", {{"name", "x"}, {"ids", {5}}}}});
  EXPECT_EQ(Squash(r.sql), "SELECT * FROM t WHERE name = ? AND id IN ( ? )");
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{"x", 5}));
  EXPECT_EQ(MustRender(tpl, Json{{"q", nullptr}}).sql, "SELECT * FROM t");
}

// As MyBatis 3.5.19 renders it (tests/source/sql/sql_template/mybatis_conformance):
// a property of null is null, a method call on null fails.
TEST(SqlTemplate, PropertyOfNullInATestIsNullAndAMethodOfNullFails) {
  EXPECT_EQ(
      MustRender("<script>SELECT 1<if test=\"user.name != null\"> x</if></script>", Json::object())
          .sql,
      "SELECT 1");
  EXPECT_NE(ErrorOf("<script><if test=\"user.size() &gt; 0\">x</if></script>")
                .find("source is null for method size()"),
            std::string::npos);
}

// The neighbours of `user.name != null` with `user` absent, as the real
// MyBatis 3.5.19 renders them (corpus case if-property-of-absent-is-null):
// `user != null` false, `user == null` true, a property chain of an absent
// value null however long, even when a method call follows it.
TEST(SqlTemplate, AbsentValueInATestAsMyBatisRendersIt) {
  const char* tpl =
      "<script>SELECT 1<if test=\"user.name != null\"> a</if><if test=\"user != null\"> b</if>"
      "<if test=\"user == null\"> c</if><if test=\"user.name.length() &gt; 0\"> d</if></script>";
  EXPECT_EQ(MustRender(tpl, Json::object()).sql, "SELECT 1  c");
  EXPECT_NE(ErrorOf("<script><if test=\"user.name.length() &gt; 0\">x</if></script>",
                    Json{{"user", Json::object()}})
                .find("source is null for method length()"),
            std::string::npos);
}

// MyBatis's DOM parser drops comments and keeps the text around one as one
// text node: no joining space appears where the comment was.
TEST(SqlTemplate, TextAroundACommentIsOneFragment) {
  EXPECT_EQ(MustRender("<script>SELECT <!-- c --> #{a}</script>", Json{{"a", 1}}).sql, "SELECT  ?");
  EXPECT_EQ(MustRender("<script>SELECT <!-- c --><![CDATA[ 1]]></script>").sql, "SELECT   1");
}

TEST(SqlTemplate, XmlEscapesAndCdata) {
  auto r = MustRender(
      "<script>SELECT * FROM t WHERE a &lt; #{a} AND b <![CDATA[ <= ]]> #{b}"
      "<if test=\"a &gt;= 1 and b lt 5\"> AND c = 1</if></script>",
      Json{{"a", 1}, {"b", 2}});
  EXPECT_EQ(r.sql, "SELECT * FROM t WHERE a < ? AND b   <=   ?  AND c = 1");
}

TEST(SqlTemplate, CommentsAreDropped) {
  EXPECT_EQ(Squash(MustRender("<script>SELECT 1 <!-- note --> FROM t</script>").sql),
            "SELECT 1 FROM t");
}

TEST(SqlTemplate, UnknownTagIsAnErrorWithPosition) {
  std::string err = ErrorOf("<script>SELECT 1\n  <iff test=\"a\">x</iff></script>");
  EXPECT_NE(err.find("Unknown element <iff>"), std::string::npos) << err;
  EXPECT_NE(err.find("line 2, column"), std::string::npos) << err;
}

TEST(SqlTemplate, UnclosedTagIsAnError) {
  std::string err = ErrorOf("<script>SELECT 1 <if test=\"a\">x</script>");
  EXPECT_NE(err.find("malformed XML"), std::string::npos) << err;
  EXPECT_NE(err.find("line 1"), std::string::npos) << err;
}

TEST(SqlTemplate, BadExpressionIsAnError) {
  std::string err = ErrorOf("<script><if test=\"a ==\">x</if></script>", Json{{"a", 1}});
  EXPECT_NE(err.find("bad expression 'a =='"), std::string::npos) << err;
}

TEST(SqlTemplate, MissingTestAttributeIsAnError) {
  EXPECT_NE(ErrorOf("<script><if>x</if></script>").find("requires the 'test' attribute"),
            std::string::npos);
}

TEST(SqlTemplate, LeadingWhitespaceBeforeScriptIsAccepted) {
  EXPECT_EQ(MustRender("\n  <script>SELECT 1</script>\n").sql, "SELECT 1");
}

TEST(SqlTemplate, ParameterRootNames) {
  auto r = MustRender(
      "<script><if test=\"_parameter != null and _parameter.a == 1\">#{a}</if>"
      "</script>",
      Json{{"a", 1}});
  EXPECT_EQ(r.bindings, std::vector<nlohmann::json>{1});
}

// ---- MyBatis 3.6 behaviour --------------------------------------------------

TEST(SqlTemplate, UnknownElementInsideChooseIsAnError) {
  // XMLScriptBuilderTest.shouldThrowIfUnknownElementFound: 3.5 dropped the
  // misspelt <otherwize> silently, and with it the default branch.
  std::string err = ErrorOf(
      "<script>select * from user\n<choose>\n<when test=\"1==1\">and id = 1</when>\n"
      "<otherwize>and id > 0</otherwize>\n</choose></script>");
  EXPECT_NE(err.find("Unknown element <otherwize> in SQL statement."), std::string::npos) << err;
  EXPECT_NE(err.find("line 4"), std::string::npos) << err;
  // Known tags other than when/if/otherwise are no choice either.
  EXPECT_NE(ErrorOf("<script><choose><bind name=\"x\" value=\"1\"/></choose></script>")
                .find("Unknown element <bind>"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("<script><choose><where>a</where></choose></script>").find("Unknown element <where>"),
      std::string::npos);
  // Text between the branches is still dropped, and <if> counts as a <when>.
  EXPECT_EQ(
      Squash(MustRender("<script>x <choose> stray <if test=\"true\">Y</if></choose></script>").sql),
      "x Y");
}

TEST(SqlTemplate, AdjacentFragmentsInsideWhereAreSpaced) {
  // 3.5 concatenated the fragments of a <where>/<trim> body: "1and".
  EXPECT_EQ(MustRender("<script>SELECT 1 FROM t<where>a = 1<if test=\"true\">and b = 2</if>"
                       "</where></script>")
                .sql,
            "SELECT 1 FROM t WHERE a = 1 and b = 2");
  EXPECT_EQ(MustRender("<script>SELECT 1 FROM t<where><if test=\"true\">a = 1</if><if "
                       "test=\"true\">or b = 2</if></where></script>")
                .sql,
            "SELECT 1 FROM t WHERE a = 1 or b = 2");
  EXPECT_EQ(MustRender("<script>UPDATE t<trim prefix=\"SET\" suffixOverrides=\",\">"
                       "<if test=\"true\">a = 1,</if><if test=\"true\">b = 2,</if></trim></script>")
                .sql,
            "UPDATE t SET a = 1, b = 2");
}

TEST(SqlTemplate, ForEachInsideWhereIsSpacedLikeMyBatis36) {
  // Each open, separator and item is a fragment of the <where> body.
  auto r = MustRender(
      "<script>SELECT 1<where><if test=\"true\">id IN</if><foreach "
      "collection=\"ids\" item=\"i\" open=\"(\" separator=\",\" close=\")\">"
      "#{i}</foreach></where></script>",
      Json{{"ids", {1, 2}}});
  EXPECT_EQ(r.sql, "SELECT 1 WHERE id IN (  ? , ? )");
  EXPECT_EQ(r.bindings, (std::vector<nlohmann::json>{1, 2}));
}

// ---- what ${} may read (docs/sql-template.md#what--may-read) ---------------

std::string UnsafeError(std::string_view tpl, const Json& params,
                        const std::set<std::string>& untrusted) {
  auto r = RenderTemplate(tpl, params, RenderOptions{untrusted});
  EXPECT_FALSE(r.ok()) << "rendered: " << (r.ok() ? r->sql : "");
  return r.ok() ? "" : r.status().message();
}

TEST(SqlTemplate, DollarOverAnUntrustedParameterIsRefused) {
  const char* tpl = "SELECT * FROM orders\nWHERE note LIKE '%${kw}%' AND tenant_id = #{tenantId}";
  Json attack = {{"kw", "x' UNION SELECT * FROM orders WHERE '1'='1"}, {"tenantId", "t1"}};
  std::string err = UnsafeError(tpl, attack, {"kw"});
  EXPECT_NE(err.find("${kw}"), std::string::npos) << err;
  EXPECT_NE(err.find("untrusted parameter 'kw'"), std::string::npos) << err;
  EXPECT_NE(err.find("line 2, column 19"), std::string::npos) << err;
  EXPECT_EQ(err.find("UNION"), std::string::npos) << "the value is not echoed: " << err;
  // Without the untrusted list the engine renders as MyBatis does.
  EXPECT_NE(MustRender(tpl, attack).sql.find("UNION SELECT"), std::string::npos);
}

TEST(SqlTemplate, DollarOverOtherKeysStillRenders) {
  const char* tpl =
      "<script>SELECT * FROM ${table} <where><if test=\"kw != null\">name LIKE #{kw}</if>"
      "<if test=\"status != null\">AND status = '${status}'</if></where> LIMIT ${n}</script>";
  auto r =
      RenderTemplate(tpl, Json{{"table", "orders"}, {"kw", "%a%"}, {"status", "PAID"}, {"n", 5}},
                     RenderOptions{{"kw"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sql, "SELECT * FROM orders  WHERE name LIKE ? AND status = 'PAID'  LIMIT 5");
  EXPECT_EQ(r->bindings, std::vector<nlohmann::json>{"%a%"});  // #{} is unaffected
}

TEST(SqlTemplate, DollarInABranchThatDoesNotRunIsRefusedToo) {
  // The template is unusable whatever the user fills in: no value of kw gets
  // past the check, not even none.
  const char* tpl = "<script>SELECT 1 <if test=\"kw != null\">AND a LIKE '${kw}'</if></script>";
  EXPECT_NE(UnsafeError(tpl, Json::object(), {"kw"}).find("${kw}"), std::string::npos);
  const char* choose =
      "<script>SELECT 1 <choose><when test=\"false\">x</when><otherwise>${kw}</otherwise>"
      "</choose></script>";
  EXPECT_NE(UnsafeError(choose, Json{{"kw", "a"}}, {"kw"}).find("${kw}"), std::string::npos);
}

TEST(SqlTemplate, BindDerivedFromAnUntrustedParameterIsRefused) {
  const char* tpl =
      "<script><bind name=\"pattern\" value=\"'%' + kw.trim() + '%'\"/>"
      "SELECT 1 WHERE a LIKE '${pattern}'</script>";
  std::string err = UnsafeError(tpl, Json{{"kw", "x"}}, {"kw"});
  EXPECT_NE(err.find("${pattern} reads the untrusted parameter 'kw' through 'pattern'"),
            std::string::npos)
      << err;
  // A bind of a bind keeps the taint.
  EXPECT_NE(UnsafeError("<script><bind name=\"a\" value=\"kw\"/><bind name=\"b\" value=\"a + 1\"/>"
                        "${b}</script>",
                        Json{{"kw", "x"}}, {"kw"})
                .find("${b}"),
            std::string::npos);
  // Binding the same parameter with #{} is the safe form.
  auto ok = RenderTemplate(
      "<script><bind name=\"pattern\" value=\"'%' + kw + '%'\"/>"
      "SELECT 1 WHERE a LIKE #{pattern}</script>",
      Json{{"kw", "x"}}, RenderOptions{{"kw"}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->bindings, std::vector<nlohmann::json>{"%x%"});
}

TEST(SqlTemplate, TrustedFragmentsTheTemplateSuppliesRender) {
  // The business service's data-permission fragment is part of the contract,
  // and a <bind> of a literal or of server-bound values stays trusted.
  auto r = RenderTemplate(
      "<script><bind name=\"scope\" value=\"'dept_id IN (3, 7)'\"/>"
      "<bind name=\"who\" value=\"'owner = ' + requestedBy\"/>"
      "SELECT 1 FROM t WHERE ${scope} AND ${who} AND name = #{kw}</script>",
      Json{{"kw", "x"}, {"requestedBy", "42"}}, RenderOptions{{"kw"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sql, "SELECT 1 FROM t WHERE dept_id IN (3, 7) AND owner = 42 AND name = ?");
}

TEST(SqlTemplate, ForEachOverAnUntrustedCollectionTaintsItsItemAndIndex) {
  const char* item =
      "<script>SELECT 1 WHERE c IN <foreach collection=\"codes\" item=\"c\" open=\"(\" "
      "separator=\",\" close=\")\">'${c}'</foreach></script>";
  std::string err = UnsafeError(item, Json{{"codes", {"a", "b"}}}, {"codes"});
  EXPECT_NE(err.find("${c} reads the untrusted parameter 'codes' through 'c'"), std::string::npos)
      << err;
  const char* index =
      "<script>SELECT 1 WHERE <foreach collection=\"filters\" index=\"k\" item=\"v\" "
      "separator=\" AND \">${k} = #{v}</foreach></script>";
  EXPECT_NE(UnsafeError(index, Json{{"filters", {{"a", 1}}}}, {"filters"}).find("${k}"),
            std::string::npos);
  // Over a trusted collection, and with #{} items, it renders.
  auto ok = RenderTemplate(item, Json{{"codes", {"a", "b"}}, {"kw", "z"}}, RenderOptions{{"kw"}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(Squash(ok->sql), "SELECT 1 WHERE c IN ( 'a' , 'b' )");
}

TEST(SqlTemplate, ForEachItemTaintEndsWithTheLoop) {
  const char* tpl = "<script><foreach collection=\"codes\" item=\"c\">#{c}</foreach> ${c}</script>";
  auto r = RenderTemplate(tpl, Json{{"codes", {"a"}}, {"c", 5}}, RenderOptions{{"codes"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Squash(r->sql), "? 5");
}

TEST(SqlTemplate, ParameterObjectReadsAreTracked) {
  Json p = {{"kw", "x"}, {"status", "PAID"}};
  EXPECT_NE(UnsafeError("SELECT ${_parameter.kw}", p, {"kw"}).find("through '_parameter'"),
            std::string::npos);
  EXPECT_NE(UnsafeError("SELECT ${_parameter['kw']}", p, {"kw"}).find("${_parameter['kw']}"),
            std::string::npos);
  EXPECT_NE(UnsafeError("SELECT ${_parameter}", p, {"kw"}).find("'kw'"), std::string::npos);
  EXPECT_NE(UnsafeError("SELECT ${_parameter[name]}", p, {"kw"}).find("'kw'"), std::string::npos);
  auto ok = RenderTemplate("SELECT '${_parameter.status}'", p, RenderOptions{{"kw"}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->sql, "SELECT 'PAID'");
}

TEST(SqlTemplate, EveryPartOfADollarExpressionCounts) {
  Json p = {{"kw", "x"}, {"flag", true}};
  for (const char* tpl : {"${kw.trim()}", "${flag ? kw : 'a'}", "${'a'.concat(kw)}",
                          "${@org.x.StringUtils@isBlank(kw) ? 'a' : 'b'}", "${{1, kw\\}}"}) {
    EXPECT_NE(UnsafeError(tpl, p, {"kw"}).find("'kw'"), std::string::npos) << tpl;
  }
}

TEST(SqlTemplate, BindOfATrustedValueDoesNotLaunderAnUntrustedName) {
  // A static check cannot tell whether the <bind> ran, so the name stays untrusted.
  EXPECT_NE(
      UnsafeError("<script><if test=\"x\"><bind name=\"kw\" value=\"'a'\"/></if>${kw}</script>",
                  Json{{"kw", "b"}}, {"kw"})
          .find("${kw}"),
      std::string::npos);
}

TEST(SqlTemplate, EscapedDollarIsTextNotARead) {
  auto r = RenderTemplate("SELECT '\\${kw}', ${n}, #{kw}", Json{{"kw", "x"}, {"n", 1}},
                          RenderOptions{{"kw"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sql, "SELECT '${kw}', 1, ?");
}

TEST(SqlTemplate, FindUnsafeDollarReportsTheFirstInDocumentOrder) {
  auto found = FindUnsafeDollar("<script>SELECT ${ok}\n  ${b} ${a}</script>", {"a", "b"});
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->expression, "${b}");
  EXPECT_EQ((*found)->parameter, "b");
  EXPECT_EQ((*found)->via, "");
  EXPECT_EQ((*found)->position, "line 2, column 3");
  auto none = FindUnsafeDollar("SELECT ${ok} #{a}", {"a"});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  // A malformed template is an error, not a verdict.
  EXPECT_FALSE(FindUnsafeDollar("<script><iff/></script>", {"a"}).ok());
  EXPECT_FALSE(FindUnsafeDollar("SELECT ${a ==}", {"b"}).ok());
}

// docs/fuzzing.md#nesting: the template comes from the business service. pugixml reads it
// without recursion, but the tree builder, the renderer, the ${} check and the
// node tree's destructor recurse per tag: tags nested past kMaxNesting are
// refused first (common/nesting.h), by the render and by the ${} check alike.
std::string NestedIfs(int depth) {
  std::string tpl = "<script>SELECT 1 ";
  tpl.reserve(depth * 30);
  for (int i = 0; i < depth; ++i) tpl += "<if test=\"true\">";
  tpl += "AND 1 = 1";
  for (int i = 0; i < depth; ++i) tpl += "</if>";
  return tpl + "</script>";
}

TEST(SqlTemplate, TagsNestedAMillionDeepAreRefused) {
  const std::string tpl = NestedIfs(1000000);
  EXPECT_EQ(ErrorOf(tpl), "line 1, column 1: template tags nested deeper than 64 levels");
  auto unsafe = FindUnsafeDollar(tpl, {"name"});
  EXPECT_EQ(unsafe.status().message(),
            "line 1, column 1: template tags nested deeper than 64 levels");
}

TEST(SqlTemplate, TagsNestedToTheBoundRender) {
  // <script> is level 1 and the text inside the innermost tag one more, so
  // 62 <if> reach the bound.
  EXPECT_EQ(Squash(MustRender(NestedIfs(62)).sql), "SELECT 1 AND 1 = 1");
  EXPECT_EQ(ErrorOf(NestedIfs(63)), "line 1, column 1: template tags nested deeper than 64 levels");
}

TEST(SqlTemplate, ValuesAnExpressionBuildsStayWithinTheBound) {
  // A list literal is the one value deeper than its parts: {p} of a
  // parameter 63 deep is 64, {{p}} would be 65.
  const Json p = Json::parse(std::string(63, '[') + std::string(63, ']'));
  auto r = RenderTemplate("<script><bind name=\"q\" value=\"{p}\"/>#{q}</script>", Json{{"p", p}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string message =
      ErrorOf("<script><bind name=\"q\" value=\"{{p}}\"/>#{q}</script>", Json{{"p", p}});
  EXPECT_NE(message.find("list literal nested deeper than 64 levels"), std::string::npos)
      << message;
}

// Runs `f` on a thread of `bytes` of stack (a thirty-second of the 8 MiB
// every thread of the center gets, docs/fuzzing.md#nesting).
using export_center::test_support::RunOnStackOf;

TEST(SqlTemplate, TheDeepestAcceptedTemplateRendersOnA256KiBStack) {
  bool done = false;
  RunOnStackOf(256 * 1024, [&] {
    // 63 tags deep (its text 64), the innermost test 63 parentheses deep.
    std::string tpl = NestedIfs(61);
    const std::string deepest =
        "<if test=\"" + std::string(63, '(') + "true" + std::string(63, ')') + "\">AND 2 = 2</if>";
    tpl.insert(tpl.find("AND 1 = 1"), deepest);
    const std::string sql = MustRender(tpl).sql;
    EXPECT_NE(sql.find("AND 2 = 2"), std::string::npos) << sql;
    EXPECT_NE(sql.find("AND 1 = 1"), std::string::npos) << sql;
    EXPECT_FALSE(FindUnsafeDollar(tpl, {"kw"})->has_value());
    EXPECT_FALSE(RenderTemplate(NestedIfs(100000), Json::object()).ok());
    done = true;
  });
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace export_center::sql_template
