// OGNL semantics as MyBatis sees them (OgnlOps conversions, and/or results).
#include "source/sql/sql_template/ognl_expression.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/small_stack.h"

namespace export_center::sql_template {
namespace {

class MapResolver : public RootResolver {
 public:
  explicit MapResolver(Json params) : params_(std::move(params)) {}
  StatusOr<Value> Lookup(const std::string& name) const override {
    auto it = params_.find(name);
    return it == params_.end() ? Value::Null() : Value::FromJson(*it);
  }

 private:
  Json params_;
};

Value Eval(const std::string& expr, const Json& params = Json::object()) {
  auto parsed = Expression::Parse(expr);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return Value::Null();
  MapResolver root(params);
  auto v = (*parsed)->Evaluate(root);
  EXPECT_TRUE(v.ok()) << expr << ": " << v.status().ToString();
  return v.ok() ? *v : Value::Null();
}

bool Truthy(const std::string& expr, const Json& params = Json::object()) {
  return ognl_ops::MyBatisTruthy(Eval(expr, params));
}

TEST(OgnlExpression, ComparisonsAndKeywordOperators) {
  Json p = {{"a", 5}, {"b", 7.5}, {"s", "abc"}};
  EXPECT_TRUE(Truthy("a < b and b > a", p));
  EXPECT_TRUE(Truthy("a lt b && b gt a", p));
  EXPECT_TRUE(Truthy("a lte 5 and a gte 5 and a eq 5 and a neq 6", p));
  EXPECT_TRUE(Truthy("s == 'abc' and s != \"abd\"", p));
  EXPECT_TRUE(Truthy("s < 'abd'", p));
  EXPECT_TRUE(Truthy("a == 5.0", p));    // Integer vs Double compare as doubles
  EXPECT_TRUE(Truthy("\"5\" == a", p));  // a numeric string compares as a number
  EXPECT_FALSE(Truthy("'5' == a", p));   // '5' is the Character 53
  EXPECT_FALSE(Truthy("not (a == 5)", p));
  EXPECT_TRUE(Truthy("!false", p));
}

TEST(OgnlExpression, NullHandling) {
  EXPECT_TRUE(Truthy("x == null"));
  EXPECT_TRUE(Truthy("null == x"));
  EXPECT_FALSE(Truthy("x != null"));
  EXPECT_FALSE(Truthy("0 == null"));
  EXPECT_TRUE(Truthy("x < 1"));  // null reads as 0 against a number
}

TEST(OgnlExpression, AndOrReturnOperands) {
  Value v = Eval("a or b", Json{{"a", nullptr}, {"b", "x"}});
  EXPECT_EQ(v.string_value(), "x");
  // "abc" is false for OGNL's and, so `and` stops and yields "abc" itself,
  // which MyBatis then treats as true (non-null).
  Value w = Eval("s and false", Json{{"s", "abc"}});
  EXPECT_EQ(w.kind(), Value::Kind::kString);
  EXPECT_TRUE(ognl_ops::MyBatisTruthy(w));
  EXPECT_TRUE(Truthy("!s", Json{{"s", "abc"}}));  // Boolean.parseBoolean("abc") is false
}

TEST(OgnlExpression, StringsCountUtf16UnitsLikeJava) {
  Json p = {{"s", "a客😀"}};
  EXPECT_EQ(Eval("s.length()", p).int_value(), 4);  // 😀 is a surrogate pair
  EXPECT_EQ(Eval("s.indexOf(\"😀\")", p).int_value(), 2);
  EXPECT_EQ(Eval("s.substring(1, 4)", p).string_value(), "客😀");
  // Half a pair is one lone surrogate, as in Java, and still one unit long.
  EXPECT_EQ(Eval("s.substring(2, 3).length()", p).int_value(), 1);
  EXPECT_EQ(Eval("s.charAt(3)", p).int_value(), 0xDE00);
}

TEST(OgnlExpression, PropertyPathsAndMethods) {
  Json p = {{"u", {{"name", " Bob "}, {"tags", {"a", "b"}}, {"m", {{"k", 1}}}}}};
  EXPECT_EQ(Eval("u.name.trim()", p).string_value(), "Bob");
  EXPECT_EQ(Eval("u.name.length()", p).int_value(), 5);
  EXPECT_EQ(Eval("u.tags.size()", p).int_value(), 2);
  EXPECT_EQ(Eval("u.tags.size", p).int_value(), 2);
  EXPECT_EQ(Eval("u.tags[1]", p).string_value(), "b");
  EXPECT_EQ(Eval("u.m[\"k\"]", p).int_value(), 1);
  EXPECT_TRUE(Eval("u.m['k']", p).is_null());  // 'k' is a Character key
  EXPECT_TRUE(Truthy("u.tags.isEmpty() == false and !u.m.isEmpty()", p));
  EXPECT_TRUE(Truthy("u.tags.contains('ab'.substring(1))", p));
  EXPECT_TRUE(Truthy("u.name.trim().startsWith(\"Bo\")", p));
  EXPECT_TRUE(Truthy("u.m.containsKey(\"k\")", p));
}

TEST(OgnlExpression, Arithmetic) {
  EXPECT_EQ(Eval("1 + 2 * 3").int_value(), 7);
  EXPECT_EQ(Eval("(pageNum - 1) * pageSize", Json{{"pageNum", 3}, {"pageSize", 20}}).int_value(),
            40);
  EXPECT_EQ(Eval("7 / 2").int_value(), 3);
  EXPECT_DOUBLE_EQ(Eval("7 / 2.0").double_value(), 3.5);
  EXPECT_EQ(Eval("7 % 4").int_value(), 3);
  EXPECT_EQ(Eval("-x", Json{{"x", 4}}).int_value(), -4);
  EXPECT_EQ(Eval("'a' + 1").string_value(), "a1");
  EXPECT_EQ(Eval("\"n=\" + 1.5").string_value(), "n=1.5");
}

// Found by sql_template_fuzzer (corpus regression-long-overflow): Java's long
// arithmetic wraps and its (long) cast of a double saturates, where the C++
// operations were undefined behaviour.
TEST(OgnlExpression, LongArithmeticWrapsAsInJava) {
  const Json p = {{"max", INT64_MAX}, {"min", INT64_MIN}, {"big", 1e300}, {"l", {1, 2}}};
  EXPECT_EQ(Eval("max + 1", p).int_value(), INT64_MIN);
  EXPECT_EQ(Eval("min - 1", p).int_value(), INT64_MAX);
  EXPECT_EQ(Eval("max * 2", p).int_value(), -2);
  EXPECT_EQ(Eval("-min", p).int_value(), INT64_MIN);
  EXPECT_EQ(Eval("min / -1", p).int_value(), INT64_MIN);
  EXPECT_EQ(Eval("min % -1", p).int_value(), 0);
  EXPECT_EQ(Eval("big.longValue()", p).int_value(), INT64_MAX);
  EXPECT_EQ(ognl_ops::JavaDoubleToLong(-1e300), INT64_MIN);
  EXPECT_EQ(ognl_ops::JavaDoubleToLong(std::nan("")), 0);
  EXPECT_EQ(ognl_ops::JavaDoubleToLong(-2.9), -2);
  auto parsed = Expression::Parse("l[big]");
  ASSERT_TRUE(parsed.ok());
  MapResolver root(p);
  EXPECT_FALSE((*parsed)->Evaluate(root).ok());  // IndexOutOfBounds, as in Java
}

TEST(OgnlExpression, TernaryInAndListLiterals) {
  EXPECT_EQ(Eval("name in {'Bob', 'Steve'} ? 'yes' : 'no'", Json{{"name", "Steve"}}).string_value(),
            "yes");
  EXPECT_TRUE(Truthy("x not in {1, 2}", Json{{"x", 3}}));
  EXPECT_EQ(Eval("name.indexOf('v')", Json{{"name", "Steve"}}).int_value(), 3);
}

TEST(OgnlExpression, StaticHelpers) {
  EXPECT_TRUE(Truthy("@org.apache.commons.lang3.StringUtils@isNotBlank(s)", Json{{"s", "x"}}));
  EXPECT_FALSE(Truthy("@org.apache.commons.lang3.StringUtils@isNotBlank(s)", Json{{"s", " "}}));
  EXPECT_TRUE(Truthy("@org.apache.commons.collections.CollectionUtils@isEmpty(l)",
                     Json{{"l", Json::array()}}));
}

TEST(OgnlExpression, NumberLiterals) {
  EXPECT_EQ(Eval("0x10").int_value(), 16);
  EXPECT_EQ(Eval("010").int_value(), 8);
  EXPECT_EQ(Eval("5L").kind(), Value::Kind::kLong);
  EXPECT_EQ(Eval("1.5").kind(), Value::Kind::kDouble);
  EXPECT_EQ(Eval("'c'").kind(), Value::Kind::kChar);
  EXPECT_EQ(Eval("'cc'").kind(), Value::Kind::kString);
  EXPECT_EQ(Eval("''").kind(), Value::Kind::kString);
}

TEST(OgnlExpression, Errors) {
  EXPECT_FALSE(Expression::Parse("a ==").ok());
  EXPECT_FALSE(Expression::Parse("a = 1").ok());
  EXPECT_FALSE(Expression::Parse("'open").ok());
  MapResolver root(Json{{"s", "abc"}});
  EXPECT_FALSE((*Expression::Parse("s > 1"))->Evaluate(root).ok());     // NumberFormatException
  EXPECT_FALSE((*Expression::Parse("x.size()"))->Evaluate(root).ok());  // method of null
  // An integer literal is an int unless suffixed: OGNL's Integer.valueOf fails.
  EXPECT_FALSE(Expression::Parse("4000000000 > 1").ok());
  EXPECT_FALSE(Expression::Parse("0x80000000 > 1").ok());
  EXPECT_TRUE(Expression::Parse("4000000000L > 1").ok());
  EXPECT_FALSE((*Expression::Parse("s.nope()"))->Evaluate(root).ok());  // no such method
  EXPECT_FALSE((*Expression::Parse("1 / 0"))->Evaluate(root).ok());
}

// Property chains are null-safe as in MyBatis 3.5 (OGNL 3.4): found by the
// MyBatis conformance test (tests/source/sql/sql_template/mybatis_conformance).
TEST(OgnlExpression, PropertyOfNullIsNull) {
  MapResolver root(Json{{"a", nullptr}, {"m", Json::object()}});
  for (const char* e : {"x.y", "a.b", "a.b.c", "a[0]", "a['k']", "m.k.z"}) {
    auto v = (*Expression::Parse(e))->Evaluate(root);
    ASSERT_TRUE(v.ok()) << e << ": " << v.status().message();
    EXPECT_TRUE(v->is_null()) << e;
  }
}

// OGNL 3.4's ASTChain (MyBatis 3.5.19): a null that meets a property or
// index link ends the whole chain with null, later method calls included; a
// null that meets a method call fails. The conformance corpus holds the same
// cases against the real jar (if-property-of-absent-is-null,
// if-method-after-absent-property-is-null, if-method-of-absent-map-key-fails).
TEST(OgnlExpression, NullEndsTheChainAtAPropertyAndFailsAtAMethod) {
  MapResolver root(Json{{"a", nullptr}, {"user", Json::object()}});
  // `x` absent, `a` null, `user.name` absent: the next link is a property or
  // an index, so the whole chain is null, the method calls after it included.
  for (const char* e :
       {"x.y.length()", "a.b.size()", "a['k'].trim()", "x.y.z.isEmpty()", "user.name.x.trim()"}) {
    auto v = (*Expression::Parse(e))->Evaluate(root);
    ASSERT_TRUE(v.ok()) << e << ": " << v.status().message();
    EXPECT_TRUE(v->is_null()) << e;
  }
  // The null meets a method call: an error, as in MyBatis.
  for (const char* e : {"x.size()", "a.trim()", "user.name.length()"}) {
    auto v = (*Expression::Parse(e))->Evaluate(root);
    ASSERT_FALSE(v.ok()) << e;
    EXPECT_NE(v.status().message().find("source is null for method"), std::string::npos) << e;
  }
}

TEST(OgnlValue, JavaDoubleToString) {
  EXPECT_EQ(JavaDoubleToString(1.0), "1.0");
  EXPECT_EQ(JavaDoubleToString(0.1), "0.1");
  EXPECT_EQ(JavaDoubleToString(123456.5), "123456.5");
  EXPECT_EQ(JavaDoubleToString(1e7), "1.0E7");
  EXPECT_EQ(JavaDoubleToString(1.5e-4), "1.5E-4");
  EXPECT_EQ(JavaDoubleToString(0.001), "0.001");
  EXPECT_EQ(JavaDoubleToString(-2.25), "-2.25");
}

// "name" or "name.key" for each root read, the input of the ${} rule.
std::vector<std::string> Reads(const std::string& expr) {
  auto parsed = Expression::Parse(expr);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  std::vector<std::string> out;
  if (!parsed.ok()) return out;
  for (const auto& r : (*parsed)->RootReads())
    out.push_back(r.key ? r.name + "." + *r.key : r.name);
  return out;
}

TEST(OgnlExpression, RootReadsSeeEveryBranchArgumentAndIndex) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Reads("kw"), V{"kw"});
  EXPECT_EQ(Reads("'%' + kw + '%'"), V{"kw"});
  EXPECT_EQ(Reads("flag ? a : b.trim()"), (V{"flag", "a", "b"}));
  EXPECT_EQ(Reads("x or y and not z"), (V{"x", "y", "z"}));
  EXPECT_EQ(Reads("s.replace(kw, 'x')"), (V{"s", "kw"}));
  EXPECT_EQ(Reads("list[i]"), (V{"list", "i"}));
  EXPECT_EQ(Reads("@org.x.StringUtils@isBlank(kw) ? '' : {a, 1}"), (V{"kw", "a"}));
  EXPECT_EQ(Reads("'literal' + 1"), V{});
}

TEST(OgnlExpression, RootReadsKeepTheConstantKeyReadOnARoot) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Reads("_parameter.kw"), V{"_parameter.kw"});
  EXPECT_EQ(Reads("_parameter['kw'].length()"), V{"_parameter.kw"});
  EXPECT_EQ(Reads("_parameter[\"kw\"]"), V{"_parameter.kw"});
  // A key computed at run time is not constant: the whole root is read.
  EXPECT_EQ(Reads("_parameter[name]"), (V{"_parameter", "name"}));
  EXPECT_EQ(Reads("_parameter"), V{"_parameter"});
  EXPECT_EQ(Reads("a.b.c"), V{"a.b"});
}

// docs/fuzzing.md#nesting: the parser recurses per parenthesis, index, argument, list item,
// ?: branch and unary operator, and evaluation and the tree's destructor per
// level of the tree (which a chain like a.b.c… or 1+1+… deepens without
// parser recursion). Each is bounded by kMaxNesting (common/nesting.h), a
// million levels refused with a clear, short message.
std::string Repeat(std::string_view piece, int n) {
  std::string out;
  out.reserve(piece.size() * n);
  for (int i = 0; i < n; ++i) out += piece;
  return out;
}

std::string ParseError(const std::string& expr) {
  auto parsed = Expression::Parse(expr);
  EXPECT_FALSE(parsed.ok()) << expr.substr(0, 80);
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(OgnlExpression, AMillionLevelsOfAnyKindAreRefused) {
  constexpr int kMillion = 1000000;
  const std::vector<std::string> deep = {
      Repeat("(", kMillion) + "1" + Repeat(")", kMillion),  // parser recursion
      Repeat("!", kMillion) + "true",                       // unary recursion
      Repeat("-", kMillion) + "1",
      Repeat("{", kMillion) + Repeat("}", kMillion),         // list literals
      Repeat("a[", kMillion) + "0" + Repeat("]", kMillion),  // index recursion
      "a" + Repeat(".b", kMillion),                          // a chain: tree height only
      "1" + Repeat(" + 1", kMillion),
      "x" + Repeat(" or x", kMillion),
      Repeat("x ? 1 : ", kMillion) + "0",
  };
  for (const std::string& expr : deep) {
    const std::string message = ParseError(expr);
    EXPECT_NE(message.find("expression nested deeper than 64 levels"), std::string::npos)
        << message.substr(0, 300);
    EXPECT_LT(message.size(), 400u);  // the expression is quoted short
  }
}

TEST(OgnlExpression, NestingUpToTheBoundStillEvaluates) {
  // 63 parentheses inside the expression's own level: 64 levels.
  EXPECT_EQ(Eval(Repeat("(", 63) + "7" + Repeat(")", 63)).int_value(), 7);
  EXPECT_EQ(Eval("1" + Repeat(" + 1", 63)).int_value(), 64);
  EXPECT_FALSE(Expression::Parse(Repeat("(", 64) + "7" + Repeat(")", 64)).ok());
  EXPECT_FALSE(Expression::Parse("1" + Repeat(" + 1", 64)).ok());
}

// Runs `f` on a thread of `bytes` of stack (a thirty-second of the 8 MiB
// every thread of the center gets, docs/fuzzing.md#nesting).
using export_center::test_support::RunOnStackOf;

TEST(OgnlExpression, TheDeepestAcceptedExpressionsRunOnA256KiBStack) {
  bool done = false;
  RunOnStackOf(256 * 1024, [&] {
    EXPECT_EQ(Eval(Repeat("(", 63) + "7" + Repeat(")", 63)).int_value(), 7);
    EXPECT_EQ(Eval(Repeat("!", 62) + "true").bool_value(), true);
    EXPECT_EQ(Eval("1" + Repeat(" + 1", 63)).int_value(), 64);
    EXPECT_EQ(Eval(Repeat("{", 63) + Repeat("}", 63)).Size(), 1u);
    EXPECT_FALSE(Expression::Parse(Repeat("(", 100000) + "7" + Repeat(")", 100000)).ok());
    done = true;
  });
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace export_center::sql_template
