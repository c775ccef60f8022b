#pragma once
// The `${}` rule (docs/sql-template.md#what--may-read): a static walk over
// every branch of a template's node tree that follows untrusted values
// through <bind> and <foreach>. Internal to sql_template/.

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "source/sql/sql_template/sql_node.h"
#include "source/sql/sql_template/sql_template.h"

namespace export_center::sql_template::internal {

// The first `${}` of the tree rooted at `root` (parsed from `text`) that
// reads a parameter named in `untrusted`. Throws TemplateError.
std::optional<UnsafeDollar> FindUnsafe(const SqlNode& root, std::string_view text,
                                       const std::set<std::string>& untrusted);

}  // namespace export_center::sql_template::internal
