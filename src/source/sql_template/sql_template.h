#pragma once
// The MyBatis-compatible template engine of the sql-template route
// (docs/sql-template.md): turns a business service's dynamic SQL template and a
// task's parameter snapshot into prepared SQL with `?` placeholders and the
// values to bind, in order.
//
// A template is either plain text or a `<script>...</script>` XML document
// (leading whitespace allowed) using MyBatis's dynamic tags: <if test>,
// <choose>/<when>/<otherwise>, <where>, <set>, <trim>, <foreach>, <bind>.
// `#{path[,options]}` becomes `?` bound to the value at `path`; `${expr}` is
// replaced by the OGNL expression's text (null gives ""). docs/sql-template.md
// lists the exact rules and where they differ from MyBatis.
//
// Thread-safety: RenderTemplate is a pure function; call it from any thread.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::sql_template {

struct RenderedSql {
  std::string sql;                       // `?` placeholders, MyBatis whitespace
  std::vector<nlohmann::json> bindings;  // one value per `?`, in order
};

// Renders `template_text` with `params` (normally a JSON object; null, an
// array or a scalar are treated as MyBatis treats such a parameter object).
// Object key order matters for <foreach> over a map, hence ordered_json.
// Returns InvalidArgument with "line L, column C: reason" for a malformed
// template (XML error, unknown or unclosed tag, bad expression, missing
// attribute) or a failed evaluation (null <foreach> collection, a property
// of null, a comparison OGNL rejects).
StatusOr<RenderedSql> RenderTemplate(std::string_view template_text,
                                     const nlohmann::ordered_json& params);
// Same, for callers holding a sorted nlohmann::json (map order is then
// alphabetical).
StatusOr<RenderedSql> RenderTemplate(std::string_view template_text, const nlohmann::json& params);

}  // namespace export_center::sql_template
