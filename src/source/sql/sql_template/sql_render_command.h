#pragma once
// `export-center sql render --template-file T --params-file P [--untrusted A,B]`:
// renders a MyBatis-style template with a JSON parameter file and prints
// exactly one JSON object {"sql": "...", "bindings": [...]} on stdout.
// `--untrusted` names the parameters to treat as user-typed: a `${}` that
// reads one of them is refused (docs/sql-template.md#what--may-read), so a
// business service can check its templates in its own build.

#include <iosfwd>
#include <set>
#include <string>

namespace export_center::sql_template {

// Returns 0 after printing the JSON object, or 1 after printing
// "sql render: <reason>" on stderr (unreadable file, invalid JSON, bad
// template, a `${}` reading an untrusted parameter: the reason names the
// `${…}` expression). An empty params file counts as {}.
int RunSqlRender(const std::string& template_file, const std::string& params_file,
                 const std::set<std::string>& untrusted = {});

// Same, writing to the given streams (for tests and embedding).
int RunSqlRender(const std::string& template_file, const std::string& params_file,
                 const std::set<std::string>& untrusted, std::ostream& out, std::ostream& err);

}  // namespace export_center::sql_template
