#pragma once
// The OGNL grammar: a lexer and a recursive-descent parser from expression
// text to the syntax tree of ognl_node.h. Internal to sql_template/.

#include <memory>
#include <string_view>

#include "common/status.h"
#include "source/sql/sql_template/ognl_node.h"

namespace export_center::sql_template::internal {

// The tree of `text`, or InvalidArgument naming the column of the first
// syntax error (the text quoted short).
StatusOr<std::unique_ptr<Expression::Node>> ParseExpressionTree(std::string_view text);

}  // namespace export_center::sql_template::internal
