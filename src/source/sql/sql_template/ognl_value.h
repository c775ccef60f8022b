#pragma once
// Value: one runtime value of the OGNL subset that MyBatis templates use.
//
// A template's parameters arrive as JSON, but MyBatis evaluates its tests on
// the Java objects a JSON mapper would produce: Integer (or Long when the
// number does not fit), Double, Boolean, String, List and Map, plus the
// Character that OGNL makes of a one-character single-quoted literal. The
// OGNL operators (==, <, +, ...) convert between those types in surprising
// ways (`0 == ''` is true, `'1' == "1"` is false), so Value keeps the Java
// type and ognl_ops below reproduces OgnlOps' conversion rules.
//
// Lists and maps are not copied: a Value points into a JSON tree that either
// the caller owns (the parameters, which outlive a render) or `owner` keeps
// alive (a list literal, a <bind> result). Values are cheap to copy.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::sql_template {

// Insertion-ordered, like the LinkedHashMap a JSON mapper builds: <foreach>
// over a map visits its entries in document order.
using Json = nlohmann::ordered_json;

class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kLong, kDouble, kChar, kString, kList, kMap };

  Value() = default;
  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Int(int32_t i);
  static Value Long(int64_t i);
  static Value Double(double d);
  // A Java char: one UTF-16 code unit, kept as its UTF-8 text too.
  static Value Char(char16_t unit);
  static Value String(std::string s);
  // Borrows `node`; the caller keeps it alive for the Value's lifetime.
  static Value FromJson(const Json& node);
  // Owns `node`.
  static Value FromOwnedJson(Json node);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_number() const {
    return kind_ == Kind::kInt || kind_ == Kind::kLong || kind_ == Kind::kDouble;
  }
  bool bool_value() const { return bool_; }
  int64_t int_value() const { return int_; }  // kInt, kLong, kChar (code unit)
  double double_value() const { return double_; }
  const std::string& string_value() const { return str_; }  // kString, kChar
  const Json& node() const { return *node_; }               // kList, kMap

  // List and map access. Elements share this value's storage.
  size_t Size() const;
  Value Element(size_t i) const;
  // Map lookup; `found` tells a missing key from a null value.
  Value Get(std::string_view key, bool* found = nullptr) const;
  // Map entries in order, as (key, value).
  std::vector<std::pair<std::string, Value>> Entries() const;
  std::vector<Value> Elements() const;

  // The JSON a binding carries: numbers stay numbers, a char becomes a string.
  nlohmann::json ToBindingJson() const;
  // Java's String.valueOf(value): "5", "1.0E10", "[a, b]", "{k=v}", "null".
  std::string ToJavaString() const;
  // The Java class name, for error messages ("java.lang.String").
  std::string JavaClassName() const;

  // Same storage (Java's reference equality for lists and maps).
  bool SameObject(const Value& other) const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string str_;
  const Json* node_ = nullptr;
  std::shared_ptr<const Json> owner_;
};

// Java's Double.toString (shortest round-trip digits, "1.0", "1.0E-5").
std::string JavaDoubleToString(double d);
// Java's String.trim(): strips every char <= U+0020 from both ends.
std::string_view JavaTrim(std::string_view s);

// The operators of OgnlOps, on Values. Each returns an error where Java
// throws (NumberFormatException, "invalid comparison", divide by zero).
namespace ognl_ops {
// OgnlOps.booleanValue: used by and/or/not/?: ("abc" is false, "true" true).
bool BooleanValue(const Value& v);
// ExpressionEvaluator.evaluateBoolean: MyBatis's <if> truthiness (non-null
// non-number non-boolean is true, numbers are true when non-zero).
bool MyBatisTruthy(const Value& v);
StatusOr<bool> Equal(const Value& a, const Value& b);
StatusOr<int> Compare(const Value& a, const Value& b);
// Java's (long) cast of a double: NaN is 0, values past the range saturate
// (a C++ cast is undefined behaviour there).
int64_t JavaDoubleToLong(double d);
// Arithmetic on Java's long: integer results wrap around on overflow as they
// do in Java (Long.MAX_VALUE + 1 is Long.MIN_VALUE), never undefined behaviour.
StatusOr<Value> Add(const Value& a, const Value& b);
StatusOr<Value> Subtract(const Value& a, const Value& b);
StatusOr<Value> Multiply(const Value& a, const Value& b);
StatusOr<Value> Divide(const Value& a, const Value& b);
StatusOr<Value> Remainder(const Value& a, const Value& b);
StatusOr<Value> Negate(const Value& a);
StatusOr<Value> BitNot(const Value& a);
// kind: '&', '|', '^', '<' (shl), '>' (shr).
StatusOr<Value> Bitwise(char op, const Value& a, const Value& b);
// Java's Object.equals (Integer 1 is not Long 1, "a" is not 'a').
bool JavaEquals(const Value& a, const Value& b);
}  // namespace ognl_ops

}  // namespace export_center::sql_template
