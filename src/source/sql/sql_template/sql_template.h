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
// `${}` text goes into the SQL unescaped, so it must never come from a user:
// the caller names the parameters a user typed freely (RenderOptions), and a
// template whose `${}` reads one of them is refused before anything renders
// (docs/sql-template.md#what--may-read).
//
// Thread-safety: RenderTemplate is a pure function; call it from any thread.

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::sql_template {

struct RenderedSql {
  std::string sql;                       // `?` placeholders, MyBatis whitespace
  std::vector<nlohmann::json> bindings;  // one value per `?`, in order
};

struct RenderOptions {
  // Keys of the parameter object whose values a user chose freely (free-text
  // parameters). A `${}` may not read them: not by name, not through
  // `_parameter`, not through a <bind> whose value reads one, and not as the
  // item or index of a <foreach> over one.
  std::set<std::string> untrusted;
};

// A `${}` that reads an untrusted parameter.
struct UnsafeDollar {
  std::string expression;  // as written: "${kw}"
  std::string parameter;   // the untrusted parameter it reads
  std::string via;         // the <bind> or <foreach> name it reads it through, or ""
  std::string position;    // "line L, column C" of the `${`

  // "line L, column C: ${kw} reads the user-typed parameter 'kw'; ..."
  std::string Message() const;
};

// Checks every `${}` of the template against `untrusted`, in every branch
// whatever the parameter values (a `${}` over a user-typed value makes the
// template unusable, not only the renders that reach it). Returns the first
// unsafe `${}` in document order, nullopt when there is none, or
// InvalidArgument for a malformed template or a `${}`, `<bind>` or
// `<foreach collection>` expression that does not parse.
StatusOr<std::optional<UnsafeDollar>> FindUnsafeDollar(std::string_view template_text,
                                                       const std::set<std::string>& untrusted);

// Renders `template_text` with `params` (normally a JSON object; null, an
// array or a scalar are treated as MyBatis treats such a parameter object).
// Object key order matters for <foreach> over a map, hence ordered_json.
// Returns InvalidArgument with "line L, column C: reason" for a malformed
// template (XML error, unknown or unclosed tag, bad expression, missing
// attribute), a failed evaluation (null <foreach> collection, a property
// of null, a comparison OGNL rejects), or a `${}` that reads one of
// `options.untrusted` (UnsafeDollar::Message(); nothing is rendered).
StatusOr<RenderedSql> RenderTemplate(std::string_view template_text,
                                     const nlohmann::ordered_json& params,
                                     const RenderOptions& options = {});
// Same, for callers holding a sorted nlohmann::json (map order is then
// alphabetical).
StatusOr<RenderedSql> RenderTemplate(std::string_view template_text, const nlohmann::json& params,
                                     const RenderOptions& options = {});

}  // namespace export_center::sql_template
