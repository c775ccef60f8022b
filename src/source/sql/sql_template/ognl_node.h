#pragma once
// The syntax tree of a parsed OGNL Expression: what the parser
// (ognl_parser.h) builds and the evaluator (ognl_evaluator.h) walks.
// Internal to sql_template/.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "source/sql/sql_template/ognl_expression.h"
#include "source/sql/sql_template/ognl_value.h"

namespace export_center::sql_template {

struct Expression::Node {
  enum class Op {
    kLiteral,
    kRoot,
    kProperty,
    kIndex,
    kMethod,
    kStatic,
    kList,
    kAnd,
    kOr,
    kNot,
    kNeg,
    kBitNot,
    kBinary,
    kTernary,
    kIn,
    kNotIn,
  };
  Op op = Op::kLiteral;
  std::string name;  // root/property/method name, binary operator, Class@method
  Value literal;
  std::vector<std::unique_ptr<Node>> kids;
  size_t pos = 0;
  // Levels of this subtree (a leaf is 1). Evaluation, the root-read walk and
  // the destructor recurse once per level; Adopt keeps it <= kMaxNesting.
  int height = 1;
};

}  // namespace export_center::sql_template
