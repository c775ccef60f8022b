#include "source/sql/sql_template/ognl_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/ascii.h"
#include "common/json_dump.h"
#include "common/utf8.h"

namespace export_center::sql_template {

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}

Value Value::Int(int32_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.int_ = i;
  return v;
}

Value Value::Long(int64_t i) {
  Value v;
  v.kind_ = Kind::kLong;
  v.int_ = i;
  return v;
}

Value Value::Double(double d) {
  Value v;
  v.kind_ = Kind::kDouble;
  v.double_ = d;
  return v;
}

Value Value::Char(char16_t unit) {
  Value v;
  v.kind_ = Kind::kChar;
  v.int_ = unit;
  utf8::Append(unit, &v.str_);
  return v;
}

Value Value::String(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.str_ = std::move(s);
  return v;
}

Value Value::FromJson(const Json& node) {
  switch (node.type()) {
    case Json::value_t::boolean:
      return Bool(node.get<bool>());
    case Json::value_t::number_integer: {
      int64_t i = node.get<int64_t>();
      if (i >= std::numeric_limits<int32_t>::min() && i <= std::numeric_limits<int32_t>::max()) {
        return Int(static_cast<int32_t>(i));
      }
      return Long(i);
    }
    case Json::value_t::number_unsigned: {
      uint64_t u = node.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
        return Int(static_cast<int32_t>(u));
      }
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Long(static_cast<int64_t>(u));
      }
      return Double(static_cast<double>(u));
    }
    case Json::value_t::number_float:
      return Double(node.get<double>());
    case Json::value_t::string:
      return String(node.get<std::string>());
    case Json::value_t::array:
    case Json::value_t::object: {
      Value v;
      v.kind_ = node.is_array() ? Kind::kList : Kind::kMap;
      v.node_ = &node;
      return v;
    }
    default:
      return Null();
  }
}

Value Value::FromOwnedJson(Json node) {
  auto owner = std::make_shared<const Json>(std::move(node));
  Value v = FromJson(*owner);
  if (v.node_ != nullptr) v.owner_ = std::move(owner);
  return v;
}

size_t Value::Size() const { return node_ == nullptr ? 0 : node_->size(); }

Value Value::Element(size_t i) const {
  Value v = FromJson((*node_)[i]);
  v.owner_ = owner_;
  return v;
}

Value Value::Get(std::string_view key, bool* found) const {
  auto it = node_->find(std::string(key));
  if (found != nullptr) *found = it != node_->end();
  if (it == node_->end()) return Null();
  Value v = FromJson(*it);
  v.owner_ = owner_;
  return v;
}

std::vector<std::pair<std::string, Value>> Value::Entries() const {
  std::vector<std::pair<std::string, Value>> out;
  for (auto it = node_->begin(); it != node_->end(); ++it) {
    Value v = FromJson(it.value());
    v.owner_ = owner_;
    out.emplace_back(it.key(), std::move(v));
  }
  return out;
}

std::vector<Value> Value::Elements() const {
  std::vector<Value> out;
  for (size_t i = 0; i < Size(); ++i) out.push_back(Element(i));
  return out;
}

nlohmann::json Value::ToBindingJson() const {
  switch (kind_) {
    case Kind::kNull:
      return nullptr;
    case Kind::kBool:
      return bool_;
    case Kind::kInt:
    case Kind::kLong:
      return int_;
    case Kind::kDouble:
      return double_;
    case Kind::kChar:
    case Kind::kString:
      return str_;
    case Kind::kList:
    case Kind::kMap:
      return nlohmann::json::parse(DumpTolerant(*node_));
  }
  return nullptr;
}

std::string JavaDoubleToString(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.2345e+07"
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  int exponent = std::atoi(sci.c_str() + e + 1);
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out = negative ? "-" : "";
  double mag = std::fabs(d);
  if (mag >= 1e-3 && mag < 1e7) {
    if (exponent >= 0) {
      while (static_cast<int>(digits.size()) <= exponent) digits += '0';
      out += digits.substr(0, exponent + 1);
      std::string frac = digits.substr(exponent + 1);
      out += "." + (frac.empty() ? std::string("0") : frac);
    } else {
      out += "0." + std::string(-exponent - 1, '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1) + ".";
  out += digits.size() > 1 ? digits.substr(1) : "0";
  out += "E" + std::to_string(exponent);
  return out;
}

std::string_view JavaTrim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= 0x20) ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= 0x20) --e;
  return s.substr(b, e - b);
}

std::string Value::ToJavaString() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return bool_ ? "true" : "false";
    case Kind::kInt:
    case Kind::kLong:
      return std::to_string(int_);
    case Kind::kDouble:
      return JavaDoubleToString(double_);
    case Kind::kChar:
    case Kind::kString:
      return str_;
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < Size(); ++i) {
        if (i > 0) out += ", ";
        out += Element(i).ToJavaString();
      }
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : Entries()) {
        if (!first) out += ", ";
        first = false;
        out += k + "=" + v.ToJavaString();
      }
      return out + "}";
    }
  }
  return "";
}

std::string Value::JavaClassName() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "java.lang.Boolean";
    case Kind::kInt:
      return "java.lang.Integer";
    case Kind::kLong:
      return "java.lang.Long";
    case Kind::kDouble:
      return "java.lang.Double";
    case Kind::kChar:
      return "java.lang.Character";
    case Kind::kString:
      return "java.lang.String";
    case Kind::kList:
      return "java.util.ArrayList";
    case Kind::kMap:
      return "java.util.LinkedHashMap";
  }
  return "";
}

bool Value::SameObject(const Value& other) const {
  if (kind_ != other.kind_) return false;
  if (kind_ == Kind::kNull) return true;
  return node_ != nullptr && node_ == other.node_;
}

namespace ognl_ops {
namespace {

// OGNL's NumericTypes constants; the order matters for promotion.
enum NumericType { kBoolT = 0, kCharT = 2, kIntT = 4, kLongT = 5, kDoubleT = 8, kNonNumeric = 10 };
constexpr int kMinRealType = 7;  // FLOAT

int TypeOf(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kBool:
      return kBoolT;
    case Value::Kind::kChar:
      return kCharT;
    case Value::Kind::kInt:
      return kIntT;
    case Value::Kind::kLong:
      return kLongT;
    case Value::Kind::kDouble:
      return kDoubleT;
    default:
      return kNonNumeric;
  }
}

int Promote(int t1, int t2, bool can_be_non_numeric) {
  if (t1 == t2) return t1;
  if (can_be_non_numeric &&
      (t1 == kNonNumeric || t2 == kNonNumeric || t1 == kCharT || t2 == kCharT)) {
    return kNonNumeric;
  }
  if (t1 == kNonNumeric) t1 = kDoubleT;  // OGNL tries to read strings as doubles
  if (t2 == kNonNumeric) t2 = kDoubleT;
  if (t1 >= kMinRealType) {
    if (t2 >= kMinRealType) return std::max(t1, t2);
    if (t2 < kIntT) return t1;
    return std::max(static_cast<int>(kDoubleT), t1);
  }
  if (t2 >= kMinRealType) {
    if (t1 < kIntT) return t2;
    return std::max(static_cast<int>(kDoubleT), t2);
  }
  return std::max(t1, t2);
}

Status NumberFormat(const std::string& s) {
  return InvalidArgument("NumberFormatException: For input string: \"" + s + "\"");
}

StatusOr<double> DoubleValue(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return 0.0;
    case Value::Kind::kBool:
      return v.bool_value() ? 1.0 : 0.0;
    case Value::Kind::kInt:
    case Value::Kind::kLong:
    case Value::Kind::kChar:
      return static_cast<double>(v.int_value());
    case Value::Kind::kDouble:
      return v.double_value();
    default:
      break;
  }
  std::string s(JavaTrim(v.ToJavaString()));
  if (s.empty()) return 0.0;
  // Double.parseDouble also accepts a trailing d/D/f/F type suffix.
  std::string body = s;
  if (!body.empty() && std::string("dDfF").find(body.back()) != std::string::npos) body.pop_back();
  if (body.empty() || body.find_first_of("xXpP") != std::string::npos) return NumberFormat(s);
  char* end = nullptr;
  double d = std::strtod(body.c_str(), &end);
  if (end != body.c_str() + body.size()) return NumberFormat(s);
  return d;
}

StatusOr<int64_t> LongValue(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return int64_t{0};
    case Value::Kind::kBool:
      return int64_t{v.bool_value() ? 1 : 0};
    case Value::Kind::kInt:
    case Value::Kind::kLong:
    case Value::Kind::kChar:
      return v.int_value();
    case Value::Kind::kDouble:
      return JavaDoubleToLong(v.double_value());
    default:
      break;
  }
  std::string s(JavaTrim(v.ToJavaString()));
  int64_t out = 0;
  const char* begin = s.c_str();
  if (!s.empty() && s[0] == '+') ++begin;
  auto res = std::from_chars(begin, s.c_str() + s.size(), out);
  if (s.empty() || res.ec != std::errc() || res.ptr != s.c_str() + s.size()) {
    return NumberFormat(s);
  }
  return out;
}

// OgnlOps.newInteger: the integer result type of an arithmetic operation.
Value NewInteger(int type, int64_t value) {
  switch (type) {
    case kBoolT:
    case kCharT:
    case kIntT:
      return Value::Int(static_cast<int32_t>(value));
    case kDoubleT:
      if (JavaDoubleToLong(static_cast<double>(value)) == value) {
        return Value::Double(static_cast<double>(value));
      }
      return Value::Long(value);
    default:
      return Value::Long(value);
  }
}

bool IsComparable(const Value& v) { return v.kind() == Value::Kind::kString; }

// Java long arithmetic, which wraps around: computed on uint64_t, where
// overflow is defined, instead of int64_t, where it is undefined behaviour.
int64_t WrapAdd(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
int64_t WrapSubtract(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
int64_t WrapMultiply(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}

template <typename DoubleOp, typename LongOp>
StatusOr<Value> Arithmetic(const Value& a, const Value& b, DoubleOp dop, LongOp lop) {
  int type = Promote(TypeOf(a), TypeOf(b), false);
  if (type == kDoubleT) {
    EC_ASSIGN_OR_RETURN(double x, DoubleValue(a));
    EC_ASSIGN_OR_RETURN(double y, DoubleValue(b));
    return Value::Double(dop(x, y));
  }
  EC_ASSIGN_OR_RETURN(int64_t x, LongValue(a));
  EC_ASSIGN_OR_RETURN(int64_t y, LongValue(b));
  EC_ASSIGN_OR_RETURN(int64_t r, lop(x, y));
  return NewInteger(type, r);
}

}  // namespace

int64_t JavaDoubleToLong(double d) {
  if (std::isnan(d)) return 0;
  // 2^63 is exactly representable; every double below it converts.
  if (d >= 9223372036854775808.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(d);
}

bool BooleanValue(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return false;
    case Value::Kind::kBool:
      return v.bool_value();
    case Value::Kind::kString: {
      return ToLowerAscii(v.string_value()) == "true";  // Boolean.parseBoolean
    }
    case Value::Kind::kChar:
    case Value::Kind::kInt:
    case Value::Kind::kLong:
      return v.int_value() != 0;
    case Value::Kind::kDouble:
      return v.double_value() != 0;
    default:
      return true;
  }
}

bool MyBatisTruthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kBool:
      return v.bool_value();
    case Value::Kind::kInt:
    case Value::Kind::kLong:
      return v.int_value() != 0;
    case Value::Kind::kDouble:
      return v.double_value() != 0;
    default:
      return !v.is_null();
  }
}

StatusOr<int> Compare(const Value& a, const Value& b) {
  if (a.SameObject(b)) return 0;
  int t1 = TypeOf(a);
  int t2 = TypeOf(b);
  int type = Promote(t1, t2, true);
  if (type == kNonNumeric && t1 == kNonNumeric && t2 == kNonNumeric) {
    if (IsComparable(a) && IsComparable(b)) {
      int c = a.string_value().compare(b.string_value());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    return InvalidArgument("invalid comparison: " + a.JavaClassName() + " and " +
                           b.JavaClassName());
  }
  if (type == kNonNumeric || type == kDoubleT) {
    EC_ASSIGN_OR_RETURN(double x, DoubleValue(a));
    EC_ASSIGN_OR_RETURN(double y, DoubleValue(b));
    return x == y ? 0 : (x < y ? -1 : 1);
  }
  EC_ASSIGN_OR_RETURN(int64_t x, LongValue(a));
  EC_ASSIGN_OR_RETURN(int64_t y, LongValue(b));
  return x == y ? 0 : (x < y ? -1 : 1);
}

StatusOr<bool> Equal(const Value& a, const Value& b) {
  if (a.is_null()) return b.is_null();
  if (b.is_null()) return false;
  if (a.SameObject(b)) return true;
  int t1 = TypeOf(a);
  int t2 = TypeOf(b);
  if (t1 == kNonNumeric && t2 == kNonNumeric && (!IsComparable(a) || !IsComparable(b))) {
    return JavaEquals(a, b);
  }
  EC_ASSIGN_OR_RETURN(int c, Compare(a, b));
  return c == 0;
}

StatusOr<Value> Add(const Value& a, const Value& b) {
  int t1 = TypeOf(a);
  int t2 = TypeOf(b);
  if (Promote(t1, t2, true) == kNonNumeric) {
    if ((t1 != kNonNumeric && b.is_null()) || (t2 != kNonNumeric && a.is_null())) {
      return InvalidArgument("NullPointerException: Can't add values " + a.ToJavaString() + " , " +
                             b.ToJavaString());
    }
    return Value::String(a.ToJavaString() + b.ToJavaString());
  }
  int type = Promote(t1, t2, true);
  if (type == kDoubleT) {
    EC_ASSIGN_OR_RETURN(double x, DoubleValue(a));
    EC_ASSIGN_OR_RETURN(double y, DoubleValue(b));
    return Value::Double(x + y);
  }
  EC_ASSIGN_OR_RETURN(int64_t x, LongValue(a));
  EC_ASSIGN_OR_RETURN(int64_t y, LongValue(b));
  return NewInteger(type, WrapAdd(x, y));
}

StatusOr<Value> Subtract(const Value& a, const Value& b) {
  return Arithmetic(
      a, b, [](double x, double y) { return x - y; },
      [](int64_t x, int64_t y) -> StatusOr<int64_t> { return WrapSubtract(x, y); });
}

StatusOr<Value> Multiply(const Value& a, const Value& b) {
  return Arithmetic(
      a, b, [](double x, double y) { return x * y; },
      [](int64_t x, int64_t y) -> StatusOr<int64_t> { return WrapMultiply(x, y); });
}

StatusOr<Value> Divide(const Value& a, const Value& b) {
  return Arithmetic(
      a, b, [](double x, double y) { return x / y; },
      [](int64_t x, int64_t y) -> StatusOr<int64_t> {
        if (y == 0) return InvalidArgument("ArithmeticException: / by zero");
        if (y == -1) return WrapSubtract(0, x);  // Long.MIN_VALUE / -1 wraps in Java
        return x / y;
      });
}

StatusOr<Value> Remainder(const Value& a, const Value& b) {
  // OgnlOps.remainder works on long values even for doubles.
  int type = Promote(TypeOf(a), TypeOf(b), false);
  EC_ASSIGN_OR_RETURN(int64_t x, LongValue(a));
  EC_ASSIGN_OR_RETURN(int64_t y, LongValue(b));
  if (y == 0) return InvalidArgument("ArithmeticException: / by zero");
  return NewInteger(type, y == -1 ? 0 : x % y);  // Long.MIN_VALUE % -1 is 0, not a trap
}

StatusOr<Value> Negate(const Value& a) {
  int type = TypeOf(a);
  if (type == kDoubleT) return Value::Double(-a.double_value());
  EC_ASSIGN_OR_RETURN(int64_t x, LongValue(a));
  return NewInteger(type, WrapSubtract(0, x));
}

StatusOr<Value> BitNot(const Value& a) {
  EC_ASSIGN_OR_RETURN(int64_t x, LongValue(a));
  return NewInteger(TypeOf(a), ~x);
}

StatusOr<Value> Bitwise(char op, const Value& a, const Value& b) {
  int type = (op == '<' || op == '>') ? TypeOf(a) : Promote(TypeOf(a), TypeOf(b), false);
  EC_ASSIGN_OR_RETURN(int64_t x, LongValue(a));
  EC_ASSIGN_OR_RETURN(int64_t y, LongValue(b));
  int64_t r = 0;
  switch (op) {
    case '&':
      r = x & y;
      break;
    case '|':
      r = x | y;
      break;
    case '^':
      r = x ^ y;
      break;
    case '<':
      r = static_cast<int64_t>(static_cast<uint64_t>(x) << (y & 63));
      break;
    default:
      r = x >> (y & 63);
      break;
  }
  return NewInteger(type, r);
}

bool JavaEquals(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kNull:
      return true;
    case Value::Kind::kBool:
      return a.bool_value() == b.bool_value();
    case Value::Kind::kInt:
    case Value::Kind::kLong:
    case Value::Kind::kChar:
      return a.int_value() == b.int_value();
    case Value::Kind::kDouble:
      return a.double_value() == b.double_value();
    case Value::Kind::kString:
      return a.string_value() == b.string_value();
    case Value::Kind::kList:
    case Value::Kind::kMap:
      return a.node() == b.node();
  }
  return false;
}

}  // namespace ognl_ops
}  // namespace export_center::sql_template
