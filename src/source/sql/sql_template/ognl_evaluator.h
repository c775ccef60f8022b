#pragma once
// Evaluation of an OGNL syntax tree (ognl_node.h) against the roots a
// RootResolver supplies: operators, property and index chains, the Java
// methods and statics MyBatis templates use. Internal to sql_template/.

#include "common/status.h"
#include "source/sql/sql_template/ognl_node.h"

namespace export_center::sql_template::internal {

// The value of `node`; InvalidArgument naming the column of a failing step.
StatusOr<Value> EvaluateTree(const Expression::Node& node, const RootResolver& root);

}  // namespace export_center::sql_template::internal
