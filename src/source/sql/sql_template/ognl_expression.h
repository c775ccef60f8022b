#pragma once
// Expression: the OGNL subset MyBatis templates use in <if test>, <when test>,
// <bind value>, <foreach collection> and ${...}.
//
// Supported: literals (null, true, false, integers incl. 0x/octal/L suffix,
// decimals, 'c' chars, 'str' and "str" strings, {a, b} lists); root names and
// property chains (a.b, list[0], map['k'], map["k"]); the methods a template
// calls on strings, lists and maps (size(), length(), isEmpty(), trim(),
// contains(), equals(), startsWith(), ...); a few well-known static helpers
// (@...StringUtils@isNotBlank(x), @...CollectionUtils@isEmpty(x));
// operators ?:, or/||, and/&&, not/!, ==/eq, !=/neq, </lt, >/gt, <=/lte,
// >=/gte, in, not in, + - * / %, unary -, ~, band/bor/xor/shl/shr.
// Semantics follow OGNL: `and`/`or` yield an operand, not a boolean; strings
// are false for `!` unless "true"; '1' is a Character and compares as 49.
//
// Thread-safety: a parsed Expression is immutable and may be shared.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "source/sql/sql_template/ognl_value.h"

namespace export_center::sql_template {

// Answers the root names of an expression: the template's bindings first
// (<bind>, <foreach> item/index, _parameter), then the parameters.
class RootResolver {
 public:
  virtual ~RootResolver() = default;
  virtual StatusOr<Value> Lookup(const std::string& name) const = 0;
};

class Expression {
 public:
  struct Node;

  // A root name the expression reads. `key` is the constant property or key
  // read on it right away (`name.key`, `name['key']`, `name["key"]`), which
  // tells which parameter `_parameter.kw` reads.
  struct RootRead {
    std::string name;
    std::optional<std::string> key;
  };

  // InvalidArgument with the column of the offending token on a syntax error.
  static StatusOr<std::shared_ptr<const Expression>> Parse(std::string_view text);

  // InvalidArgument when evaluation fails the way OGNL would throw (a property
  // of null, a non-numeric string compared with a number, ...).
  StatusOr<Value> Evaluate(const RootResolver& root) const;

  const std::string& text() const { return text_; }

  // Every root name the expression may read, in any branch of ?:, and/or,
  // in method arguments and indexes, in source order (repeats kept).
  std::vector<RootRead> RootReads() const;

  Expression(std::string text, std::unique_ptr<Node> root);
  ~Expression();

 private:
  std::string text_;
  std::unique_ptr<Node> root_;
};

}  // namespace export_center::sql_template
