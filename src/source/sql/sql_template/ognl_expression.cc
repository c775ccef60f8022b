// Expression (ognl_expression.h): parse, evaluate and the root-read walk
// over the tree of ognl_node.h; the grammar is in ognl_parser.cc, the
// evaluation in ognl_evaluator.cc.
#include "source/sql/sql_template/ognl_expression.h"

#include <optional>
#include <vector>

#include "source/sql/sql_template/ognl_evaluator.h"
#include "source/sql/sql_template/ognl_node.h"
#include "source/sql/sql_template/ognl_parser.h"

namespace export_center::sql_template {
namespace {

using Node = Expression::Node;
using Op = Node::Op;

// RootReads' walk: a root directly under a property or a constant index
// is read with that key; every other root is read whole.
void CollectRootReads(const Node& n, std::vector<Expression::RootRead>& out) {
  if (n.op == Op::kRoot) {
    out.push_back({n.name, std::nullopt});
    return;
  }
  size_t first = 0;
  if ((n.op == Op::kProperty || n.op == Op::kIndex) && !n.kids.empty() &&
      n.kids[0]->op == Op::kRoot) {
    std::optional<std::string> key;
    if (n.op == Op::kProperty) {
      key = n.name;
    } else if (n.kids.size() > 1 && n.kids[1]->op == Op::kLiteral &&
               (n.kids[1]->literal.kind() == Value::Kind::kString ||
                n.kids[1]->literal.kind() == Value::Kind::kChar)) {
      key = n.kids[1]->literal.string_value();
    }
    out.push_back({n.kids[0]->name, key});
    first = 1;
  }
  for (size_t i = first; i < n.kids.size(); ++i) CollectRootReads(*n.kids[i], out);
}

}  // namespace

std::vector<Expression::RootRead> Expression::RootReads() const {
  std::vector<RootRead> out;
  CollectRootReads(*root_, out);
  return out;
}

Expression::Expression(std::string text, std::unique_ptr<Node> root)
    : text_(std::move(text)), root_(std::move(root)) {}
Expression::~Expression() = default;

StatusOr<std::shared_ptr<const Expression>> Expression::Parse(std::string_view text) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<Node> root, internal::ParseExpressionTree(text));
  return std::make_shared<const Expression>(std::string(text), std::move(root));
}

StatusOr<Value> Expression::Evaluate(const RootResolver& root) const {
  auto v = internal::EvaluateTree(*root_, root);
  if (!v.ok()) {
    return InvalidArgument("error evaluating expression '" + text_ + "': " + v.status().message());
  }
  return v;
}

}  // namespace export_center::sql_template
