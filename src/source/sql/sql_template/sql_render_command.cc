#include "source/sql/sql_template/sql_render_command.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json_dump.h"
#include "common/nesting.h"
#include "source/sql/sql_template/sql_template.h"

namespace export_center::sql_template {
namespace {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Unavailable("cannot read " + path);
  return buf.str();
}

StatusOr<nlohmann::ordered_json> ReadParams(const std::string& path) {
  EC_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return nlohmann::ordered_json::object();
  // ordered_json keeps the key order a <foreach> over a map must follow.
  auto parsed = ParseJsonWithin<nlohmann::ordered_json>(text);  // common/nesting.h
  if (!parsed.ok()) return parsed.status().WithContext(path);
  if (parsed->is_discarded()) return InvalidArgument(path + " is not valid JSON");
  return parsed;
}

}  // namespace

int RunSqlRender(const std::string& template_file, const std::string& params_file,
                 const std::set<std::string>& untrusted, std::ostream& out, std::ostream& err) {
  auto text = ReadFile(template_file);
  if (!text.ok()) {
    err << "sql render: " << text.status().message() << "\n";
    return 1;
  }
  std::string_view body = *text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // UTF-8 BOM
  auto params = ReadParams(params_file);
  if (!params.ok()) {
    err << "sql render: " << params.status().message() << "\n";
    return 1;
  }
  auto rendered = RenderTemplate(body, *params, RenderOptions{untrusted});
  if (!rendered.ok()) {
    err << "sql render: " << template_file << ": " << rendered.status().message() << "\n";
    return 1;
  }
  nlohmann::ordered_json result;
  result["sql"] = rendered->sql;
  result["bindings"] = nlohmann::ordered_json::array();
  for (const auto& b : rendered->bindings) {
    result["bindings"].push_back(nlohmann::ordered_json::parse(DumpTolerant(b)));
  }
  out << DumpTolerant(result) << "\n";
  return 0;
}

int RunSqlRender(const std::string& template_file, const std::string& params_file,
                 const std::set<std::string>& untrusted) {
  return RunSqlRender(template_file, params_file, untrusted, std::cout, std::cerr);
}

}  // namespace export_center::sql_template
