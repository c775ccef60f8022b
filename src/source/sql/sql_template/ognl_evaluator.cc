// The evaluator of ognl_evaluator.h.
#include "source/sql/sql_template/ognl_evaluator.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>
#include <limits>
#include <vector>

#include "common/ascii.h"
#include "common/json_dump.h"
#include "common/nesting.h"
#include "common/utf8.h"
#include "source/sql/sql_template/ognl_utf16.h"

namespace export_center::sql_template::internal {
namespace {

using Node = Expression::Node;
using Op = Node::Op;
Status EvalError(const Node& node, const std::string& message) {
  return InvalidArgument(message + " (at column " + std::to_string(node.pos + 1) + ")");
}

int32_t Utf16Length(const std::string& s) { return static_cast<int32_t>(ToUtf16(s).size()); }

bool IsBlank(const Value& v) {
  if (v.is_null()) return true;
  return JavaTrim(v.ToJavaString()).empty();
}

class Evaluator {
 public:
  explicit Evaluator(const RootResolver& root) : root_(root) {}

  StatusOr<Value> Eval(const Node& n) {
    switch (n.op) {
      case Op::kLiteral:
        return n.literal;
      case Op::kRoot:
        return root_.Lookup(n.name);
      case Op::kList:
        return ListLiteral(n);
      case Op::kAnd:
      case Op::kOr:
        return Logical(n);
      case Op::kNot: {
        EC_ASSIGN_OR_RETURN(Value v, Eval(*n.kids[0]));
        return Value::Bool(!ognl_ops::BooleanValue(v));
      }
      case Op::kNeg: {
        EC_ASSIGN_OR_RETURN(Value v, Eval(*n.kids[0]));
        return Wrap(n, ognl_ops::Negate(v));
      }
      case Op::kBitNot: {
        EC_ASSIGN_OR_RETURN(Value v, Eval(*n.kids[0]));
        return Wrap(n, ognl_ops::BitNot(v));
      }
      case Op::kTernary: {
        EC_ASSIGN_OR_RETURN(Value c, Eval(*n.kids[0]));
        return Eval(*n.kids[ognl_ops::BooleanValue(c) ? 1 : 2]);
      }
      case Op::kBinary:
        return BinaryOp(n);
      case Op::kIn:
      case Op::kNotIn:
        return In(n);
      case Op::kProperty:
      case Op::kIndex:
      case Op::kMethod: {
        bool ended = false;
        return Link(n, &ended);
      }
      case Op::kStatic:
        return Static(n);
    }
    return Internal("unknown expression node");
  }

 private:
  StatusOr<Value> Wrap(const Node& n, StatusOr<Value> v) {
    if (!v.ok()) return EvalError(n, v.status().message());
    return v;
  }

  StatusOr<std::vector<Value>> Args(const Node& n, size_t first) {
    std::vector<Value> out;
    for (size_t i = first; i < n.kids.size(); ++i) {
      EC_ASSIGN_OR_RETURN(Value v, Eval(*n.kids[i]));
      out.push_back(std::move(v));
    }
    return out;
  }

  StatusOr<Value> ListLiteral(const Node& n) {
    EC_ASSIGN_OR_RETURN(std::vector<Value> items, Args(n, 0));
    Json list = Json::array();
    for (const Value& v : items) {
      // The one place evaluation makes a value deeper than its parts (a
      // <bind> of {x} in a <foreach> deepens x once per item): kept within
      // kMaxNesting, as every value read from outside (common/nesting.h).
      auto item = ParseJsonWithin<Json>(DumpTolerant(v.ToBindingJson()), kMaxNesting - 1);
      if (!item.ok()) return EvalError(n, NestingTooDeep("list literal", kMaxNesting).message());
      list.push_back(std::move(item).value());
    }
    return Value::FromOwnedJson(std::move(list));
  }

  // OGNL's and/or return the deciding operand itself, not a boolean.
  StatusOr<Value> Logical(const Node& n) {
    EC_ASSIGN_OR_RETURN(Value l, Eval(*n.kids[0]));
    bool truthy = ognl_ops::BooleanValue(l);
    if (n.op == Op::kAnd ? !truthy : truthy) return l;
    return Eval(*n.kids[1]);
  }

  StatusOr<Value> BinaryOp(const Node& n) {
    EC_ASSIGN_OR_RETURN(Value a, Eval(*n.kids[0]));
    EC_ASSIGN_OR_RETURN(Value b, Eval(*n.kids[1]));
    const std::string& op = n.name;
    if (op == "==" || op == "!=") {
      auto eq = ognl_ops::Equal(a, b);
      if (!eq.ok()) return EvalError(n, eq.status().message());
      return Value::Bool((op == "==") == *eq);
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") return Relation(n, a, b);
    if (op == "+") return Wrap(n, ognl_ops::Add(a, b));
    if (op == "-") return Wrap(n, ognl_ops::Subtract(a, b));
    if (op == "*") return Wrap(n, ognl_ops::Multiply(a, b));
    if (op == "/") return Wrap(n, ognl_ops::Divide(a, b));
    if (op == "%") return Wrap(n, ognl_ops::Remainder(a, b));
    char bit = op == "<<" ? '<' : op == ">>" ? '>' : op[0];
    return Wrap(n, ognl_ops::Bitwise(bit, a, b));
  }

  // a <= b is OGNL's !(a > b), a >= b is !(a < b).
  StatusOr<Value> Relation(const Node& n, const Value& a, const Value& b) {
    auto c = ognl_ops::Compare(a, b);
    if (!c.ok()) return EvalError(n, c.status().message());
    const std::string& op = n.name;
    if (op == "<") return Value::Bool(*c < 0);
    if (op == ">") return Value::Bool(*c > 0);
    if (op == "<=") return Value::Bool(!(*c > 0));
    return Value::Bool(!(*c < 0));
  }

  StatusOr<Value> In(const Node& n) {
    EC_ASSIGN_OR_RETURN(Value a, Eval(*n.kids[0]));
    EC_ASSIGN_OR_RETURN(Value b, Eval(*n.kids[1]));
    std::vector<Value> elements;
    if (b.kind() == Value::Kind::kList) {
      elements = b.Elements();
    } else if (b.kind() == Value::Kind::kMap) {
      for (auto& [k, v] : b.Entries()) elements.push_back(v);
    } else if (!b.is_null()) {
      elements.push_back(b);
    }
    bool found = false;
    for (const Value& e : elements) {
      auto eq = ognl_ops::Equal(a, e);
      if (!eq.ok()) return EvalError(n, eq.status().message());
      if (*eq) {
        found = true;
        break;
      }
    }
    return Value::Bool(n.op == Op::kIn ? found : !found);
  }

  static bool IsLink(const Node& n) {
    return n.op == Op::kProperty || n.op == Op::kIndex || n.op == Op::kMethod;
  }

  // One link of a navigation chain (`a.b[0].c()`), its target evaluated
  // first. As OGNL 3.4's ASTChain in MyBatis 3.5.19: a null that meets a
  // property or index link ends the whole chain with null (`user.name` and
  // `user.name.length()` of an absent `user` are null); a null that meets a
  // method call fails (`user.size()`: "source is null for method size()").
  // `*ended` tells the outer links of the same chain that it ended.
  StatusOr<Value> Link(const Node& n, bool* ended) {
    const Node& target_node = *n.kids[0];
    StatusOr<Value> target = IsLink(target_node) ? Link(target_node, ended) : Eval(target_node);
    if (!target.ok() || *ended) return target;
    if (target->is_null() && n.op != Op::kMethod) {
      *ended = true;
      return Value::Null();
    }
    if (n.op == Op::kProperty) return Property(n, n.name, *target);
    if (n.op == Op::kIndex) return Index(n, *target);
    return Method(n, *target);
  }

  StatusOr<Value> Property(const Node& n, const std::string& name, const Value& target) {
    switch (target.kind()) {
      case Value::Kind::kMap:
        // OGNL's MapPropertyAccessor answers these names itself.
        if (name == "size") return Value::Int(static_cast<int32_t>(target.Size()));
        if (name == "isEmpty") return Value::Bool(target.Size() == 0);
        if (name == "keys" || name == "keySet") return Keys(target);
        if (name == "values") return Values(target);
        return target.Get(name);
      case Value::Kind::kList:
        if (name == "size") return Value::Int(static_cast<int32_t>(target.Size()));
        if (name == "isEmpty" || name == "empty") return Value::Bool(target.Size() == 0);
        break;
      case Value::Kind::kString:
        if (name == "empty") return Value::Bool(target.string_value().empty());
        if (name == "blank") return Value::Bool(IsBlank(target));
        break;
      default:
        break;
    }
    return EvalError(n, "No such property: " + name + " on " + target.JavaClassName());
  }

  static Value Keys(const Value& map) {
    Json keys = Json::array();
    for (auto& [k, v] : map.Entries()) keys.push_back(k);
    return Value::FromOwnedJson(std::move(keys));
  }
  static Value Values(const Value& map) {
    Json values = Json::array();
    for (auto& [k, v] : map.Entries())
      values.push_back(v.is_null() ? Json() : Json::parse(DumpTolerant(v.ToBindingJson())));
    return Value::FromOwnedJson(std::move(values));
  }

  // REQUIRES: a non-null target (Link ends the chain at a null).
  StatusOr<Value> Index(const Node& n, const Value& target) {
    EC_ASSIGN_OR_RETURN(Value index, Eval(*n.kids[1]));
    if (target.kind() == Value::Kind::kMap) {
      // Map.get with a Character key never matches a String key: map['k'] is null.
      if (index.kind() != Value::Kind::kString) return Value::Null();
      return target.Get(index.string_value());
    }
    if (target.kind() == Value::Kind::kList) {
      if (index.kind() == Value::Kind::kString) {
        return Property(n, index.string_value(), target);
      }
      if (index.kind() != Value::Kind::kInt && index.kind() != Value::Kind::kLong &&
          index.kind() != Value::Kind::kDouble) {
        return EvalError(n, "bad list index " + index.ToJavaString());
      }
      int64_t i = index.kind() == Value::Kind::kDouble
                      ? ognl_ops::JavaDoubleToLong(index.double_value())
                      : index.int_value();
      if (i < 0 || static_cast<size_t>(i) >= target.Size()) {
        return EvalError(n, "IndexOutOfBoundsException: Index " + std::to_string(i) +
                                " out of bounds for length " + std::to_string(target.Size()));
      }
      return target.Element(static_cast<size_t>(i));
    }
    if (index.kind() == Value::Kind::kString) {
      return Property(n, index.string_value(), target);
    }
    return EvalError(n, "cannot index " + target.JavaClassName());
  }

  StatusOr<Value> Method(const Node& n, const Value& target) {
    EC_ASSIGN_OR_RETURN(std::vector<Value> args, Args(n, 1));
    if (target.is_null()) {
      return EvalError(n, "source is null for method " + n.name + "()");
    }
    StatusOr<Value> out = CallMethod(n, target, args);
    return out;
  }

  StatusOr<Value> CallMethod(const Node& n, const Value& t, const std::vector<Value>& a) {
    const std::string& m = n.name;
    size_t argc = a.size();
    if (m == "toString" && argc == 0) return Value::String(t.ToJavaString());
    if (m == "equals" && argc == 1) return Value::Bool(ognl_ops::JavaEquals(t, a[0]));
    if (m == "hashCode" && argc == 0) return EvalError(n, "hashCode() is not supported");
    switch (t.kind()) {
      case Value::Kind::kString:
        return StringMethod(n, t, a);
      case Value::Kind::kList:
        return ListMethod(n, t, a);
      case Value::Kind::kMap:
        return MapMethod(n, t, a);
      default:
        break;
    }
    if (t.is_number() && argc == 0) {
      if (m == "intValue")
        return Value::Int(static_cast<int32_t>(t.kind() == Value::Kind::kDouble
                                                   ? ognl_ops::JavaDoubleToLong(t.double_value())
                                                   : t.int_value()));
      if (m == "longValue")
        return Value::Long(t.kind() == Value::Kind::kDouble
                               ? ognl_ops::JavaDoubleToLong(t.double_value())
                               : t.int_value());
      if (m == "doubleValue")
        return Value::Double(t.kind() == Value::Kind::kDouble ? t.double_value()
                                                              : static_cast<double>(t.int_value()));
    }
    if (t.kind() == Value::Kind::kBool && m == "booleanValue" && argc == 0) return t;
    return NoMethod(n, t, argc);
  }

  Status NoMethod(const Node& n, const Value& t, size_t argc) {
    return EvalError(n, "MethodFailedException: no method " + n.name + "(" + std::to_string(argc) +
                            " args) on " + t.JavaClassName());
  }

  static bool IsText(const Value& v) {
    return v.kind() == Value::Kind::kString || v.kind() == Value::Kind::kChar;
  }

  StatusOr<Value> StringMethod(const Node& n, const Value& t, const std::vector<Value>& a) {
    const std::string& m = n.name;
    const std::string& s = t.string_value();
    size_t argc = a.size();
    if (argc == 0) {
      if (m == "length") return Value::Int(Utf16Length(s));
      if (m == "isEmpty") return Value::Bool(s.empty());
      if (m == "isBlank") return Value::Bool(IsBlank(t));
      if (m == "trim") return Value::String(std::string(JavaTrim(s)));
      if (m == "toUpperCase" || m == "toLowerCase") {
        return Value::String(m == "toUpperCase" ? ToUpperAscii(s) : ToLowerAscii(s));
      }
    }
    if (argc == 1 && IsText(a[0])) {
      const std::string& x = a[0].string_value();
      if (m == "equalsIgnoreCase") {
        if (a[0].kind() != Value::Kind::kString) return Value::Bool(false);
        return Value::Bool(EqualsIgnoreCaseAscii(s, x));
      }
      if (m == "startsWith") return Value::Bool(s.rfind(x, 0) == 0);
      if (m == "endsWith")
        return Value::Bool(s.size() >= x.size() &&
                           s.compare(s.size() - x.size(), x.size(), x) == 0);
      if (m == "contains") return Value::Bool(s.find(x) != std::string::npos);
      if (m == "concat") return Value::String(s + x);
      if (m == "indexOf" || m == "lastIndexOf") {
        std::u16string hay = ToUtf16(s), needle = ToUtf16(x);
        size_t p = m == "indexOf" ? hay.find(needle) : hay.rfind(needle);
        return Value::Int(p == std::u16string::npos ? -1 : static_cast<int32_t>(p));
      }
      if (m == "compareTo") return Value::Int(s.compare(x) < 0 ? -1 : (s == x ? 0 : 1));
    }
    if (m == "charAt" && argc == 1 && a[0].kind() == Value::Kind::kInt) {
      std::u16string u = ToUtf16(s);
      if (a[0].int_value() < 0 || static_cast<size_t>(a[0].int_value()) >= u.size()) {
        return EvalError(n, "StringIndexOutOfBoundsException");
      }
      return Value::Char(u[a[0].int_value()]);
    }
    if (m == "substring" && (argc == 1 || argc == 2)) return Substring(n, s, a);
    if (m == "replace" && argc == 2 && IsText(a[0]) && IsText(a[1])) {
      std::string out = s;
      const std::string& from = a[0].string_value();
      const std::string& to = a[1].string_value();
      if (from.empty()) return EvalError(n, "replace of an empty string is not supported");
      for (size_t p = out.find(from); p != std::string::npos; p = out.find(from, p + to.size())) {
        out.replace(p, from.size(), to);
      }
      return Value::String(out);
    }
    return NoMethod(n, t, argc);
  }

  StatusOr<Value> Substring(const Node& n, const std::string& s, const std::vector<Value>& a) {
    std::u16string u = ToUtf16(s);
    for (const Value& v : a) {
      if (v.kind() != Value::Kind::kInt) return EvalError(n, "substring needs int arguments");
    }
    int64_t b = a[0].int_value();
    int64_t e = a.size() == 2 ? a[1].int_value() : static_cast<int64_t>(u.size());
    if (b < 0 || e > static_cast<int64_t>(u.size()) || b > e) {
      return EvalError(n, "StringIndexOutOfBoundsException: begin " + std::to_string(b) + ", end " +
                              std::to_string(e) + ", length " + std::to_string(u.size()));
    }
    return Value::String(FromUtf16(u.substr(b, e - b)));
  }

  StatusOr<Value> ListMethod(const Node& n, const Value& t, const std::vector<Value>& a) {
    const std::string& m = n.name;
    if (a.empty() && m == "size") return Value::Int(static_cast<int32_t>(t.Size()));
    if (a.empty() && m == "isEmpty") return Value::Bool(t.Size() == 0);
    if (a.size() == 1 && (m == "contains" || m == "indexOf")) {
      int32_t at = -1;
      for (size_t i = 0; i < t.Size() && at < 0; ++i) {
        if (ognl_ops::JavaEquals(t.Element(i), a[0])) at = static_cast<int32_t>(i);
      }
      return m == "contains" ? Value::Bool(at >= 0) : Value::Int(at);
    }
    if (a.size() == 1 && m == "get" && a[0].kind() == Value::Kind::kInt) {
      if (a[0].int_value() < 0 || static_cast<size_t>(a[0].int_value()) >= t.Size()) {
        return EvalError(n, "IndexOutOfBoundsException: Index " + a[0].ToJavaString() +
                                " out of bounds for length " + std::to_string(t.Size()));
      }
      return t.Element(static_cast<size_t>(a[0].int_value()));
    }
    return NoMethod(n, t, a.size());
  }

  StatusOr<Value> MapMethod(const Node& n, const Value& t, const std::vector<Value>& a) {
    const std::string& m = n.name;
    if (a.empty() && m == "size") return Value::Int(static_cast<int32_t>(t.Size()));
    if (a.empty() && m == "isEmpty") return Value::Bool(t.Size() == 0);
    if (a.empty() && m == "keySet") return Keys(t);
    if (a.empty() && m == "values") return Values(t);
    if (a.size() == 1 && (m == "get" || m == "containsKey")) {
      bool found = false;
      Value v =
          a[0].kind() == Value::Kind::kString ? t.Get(a[0].string_value(), &found) : Value::Null();
      return m == "get" ? v : Value::Bool(found);
    }
    if (a.size() == 1 && m == "containsValue") {
      for (auto& [k, v] : t.Entries()) {
        if (ognl_ops::JavaEquals(v, a[0])) return Value::Bool(true);
      }
      return Value::Bool(false);
    }
    return NoMethod(n, t, a.size());
  }

  // The null/empty helpers templates commonly call through @Class@method.
  StatusOr<Value> Static(const Node& n) {
    EC_ASSIGN_OR_RETURN(std::vector<Value> a, Args(n, 0));
    const std::string& f = n.name;
    if (a.size() == 1) {
      const Value& v = a[0];
      bool empty =
          v.is_null() || (IsText(v) && v.string_value().empty()) ||
          ((v.kind() == Value::Kind::kList || v.kind() == Value::Kind::kMap) && v.Size() == 0);
      if (f == "StringUtils@isEmpty" || f == "CollectionUtils@isEmpty" ||
          f == "ObjectUtils@isEmpty") {
        return Value::Bool(empty);
      }
      if (f == "StringUtils@isNotEmpty" || f == "CollectionUtils@isNotEmpty" ||
          f == "ObjectUtils@isNotEmpty" || f == "StringUtils@hasLength") {
        return Value::Bool(!empty);
      }
      if (f == "StringUtils@isBlank") return Value::Bool(IsBlank(v));
      if (f == "StringUtils@isNotBlank" || f == "StringUtils@hasText")
        return Value::Bool(!IsBlank(v));
    }
    return EvalError(n, "unsupported static call @" + f);
  }

  const RootResolver& root_;
};

}  // namespace

StatusOr<Value> EvaluateTree(const Expression::Node& node, const RootResolver& root) {
  Evaluator evaluator(root);
  return evaluator.Eval(node);
}

}  // namespace export_center::sql_template::internal
