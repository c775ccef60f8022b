#pragma once
// `export-center sql render --template-file T --params-file P`: renders a
// MyBatis-style template with a JSON parameter file and prints exactly one
// JSON object {"sql": "...", "bindings": [...]} on stdout.

#include <iosfwd>
#include <string>

namespace export_center::sql_template {

// Returns 0 after printing the JSON object, or 1 after printing
// "sql render: <reason>" on stderr (unreadable file, invalid JSON, bad
// template). An empty params file counts as {}.
int RunSqlRender(const std::string& template_file, const std::string& params_file);

// Same, writing to the given streams (for tests and embedding).
int RunSqlRender(const std::string& template_file, const std::string& params_file,
                 std::ostream& out, std::ostream& err);

}  // namespace export_center::sql_template
