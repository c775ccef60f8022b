#include "source/sql/template_safety.h"

#include <algorithm>
#include <map>

#include "common/civil_day.h"
#include "source/sql/sql_template/sql_template.h"

namespace export_center::source {
namespace {

using nlohmann::json;

bool InAllowedList(const std::string& text, const registry::ParameterSpec& spec) {
  return std::find(spec.allowed.begin(), spec.allowed.end(), text) != spec.allowed.end();
}

// A value whose text cannot carry SQL: see UntrustedParameters.
bool IsHarmless(const json& value, const registry::ParameterSpec* spec) {
  if (value.is_null() || value.is_boolean() || value.is_number()) return true;
  if (value.is_array()) {
    return std::all_of(value.begin(), value.end(),
                       [&](const json& e) { return !e.is_array() && IsHarmless(e, spec); });
  }
  if (!value.is_string() || spec == nullptr) return false;
  const std::string& text = value.get_ref<const std::string&>();
  if (!spec->allowed.empty()) return InAllowedList(text, *spec);
  return spec->type == "DATE" && CivilDay::Parse(text).has_value();
}

// A declared parameter a user may fill with any text.
bool IsFreeText(const registry::ParameterSpec& spec) {
  return spec.allowed.empty() && (spec.type == "STRING" || spec.type == "STRING_LIST");
}

}  // namespace

std::set<std::string> UntrustedParameters(const json& task_parameters,
                                          const std::vector<registry::ParameterSpec>& specs) {
  std::set<std::string> untrusted;
  std::map<std::string, const registry::ParameterSpec*> by_name;
  for (const auto& spec : specs) {
    by_name[spec.name] = &spec;
    if (IsFreeText(spec)) untrusted.insert(spec.name);
  }
  if (task_parameters.is_object()) {
    for (const auto& [key, value] : task_parameters.items()) {
      auto spec = by_name.find(key);
      if (!IsHarmless(value, spec == by_name.end() ? nullptr : spec->second)) untrusted.insert(key);
    }
  }
  for (const char* server_bound : {"tenantId", "appCode", "requestedBy"}) {
    untrusted.erase(server_bound);
  }
  return untrusted;
}

StatusOr<json> TemplateParameters(const std::string& parameters_json, const std::string& tenant_id,
                                  task::AppCode app_code, const std::string& requested_by) {
  json params = json::parse(parameters_json.empty() ? "{}" : parameters_json, nullptr, false);
  if (params.is_discarded() || !params.is_object()) {
    return InvalidArgument("task parameters are not a JSON object");
  }
  // Server-side identity wins: a user must not choose the tenant a query reads.
  params["tenantId"] = tenant_id;
  params["appCode"] = std::string(task::ToString(app_code));
  params["requestedBy"] = requested_by;
  return params;
}

std::set<std::string> EnrichUntrusted(const std::set<std::string>& untrusted) {
  std::set<std::string> names = untrusted;
  names.insert("keys");
  return names;
}

StatusOr<std::optional<UnsafeTemplateUse>> FindUnsafeTemplateUse(
    const SqlContract& contract, const std::set<std::string>& untrusted) {
  auto found = sql_template::FindUnsafeDollar(contract.sql_template, untrusted);
  if (!found.ok()) return found.status().WithContext("rendering the contract's sqlTemplate");
  if (*found) return UnsafeTemplateUse{"sqlTemplate", (*found)->Message()};
  const std::set<std::string> enrich = EnrichUntrusted(untrusted);
  for (const auto& def : contract.enrich_sqls) {
    auto in_group = sql_template::FindUnsafeDollar(def.sql, enrich);
    if (!in_group.ok()) return in_group.status().WithContext("enrich group " + def.group);
    if (*in_group) return UnsafeTemplateUse{"enrich group " + def.group, (*in_group)->Message()};
  }
  return std::optional<UnsafeTemplateUse>();
}

// A scanned statement may end in one ';', which must not end up inside "(…) _t".
std::string StripTrailingSemicolon(std::string sql) {
  while (!sql.empty() &&
         (std::isspace(static_cast<unsigned char>(sql.back())) || sql.back() == ';')) {
    sql.pop_back();
  }
  return sql;
}

}  // namespace export_center::source
