#include "usecase/parameters.h"

#include <algorithm>

#include "common/civil_day.h"
#include "common/json_dump.h"
#include "common/utf8.h"

namespace export_center::usecase {
namespace {

using json = nlohmann::json;

struct Walk {
  const task::LimitsOptions& limits;
  int keys = 0;
};

Status CheckString(const std::string& s, const std::string& where, const Walk& w) {
  if (utf8::CountCodePoints(s) > static_cast<size_t>(w.limits.max_parameter_string_chars)) {
    return InvalidArgument("parameter " + where + " is longer than " +
                           std::to_string(w.limits.max_parameter_string_chars) + " characters");
  }
  return Status::Ok();
}

// depth: 1 for the parameters object itself.
Status CheckShape(const json& v, int depth, const std::string& where, Walk& w) {
  if (v.is_string()) return CheckString(v.get_ref<const std::string&>(), where, w);
  if (!v.is_structured()) return Status::Ok();
  if (depth > 2) return InvalidArgument("parameter " + where + " is nested deeper than 2 levels");
  if (v.is_array()) {
    for (const auto& item : v) EC_RETURN_IF_ERROR(CheckShape(item, depth + 1, where, w));
    return Status::Ok();
  }
  for (const auto& [key, item] : v.items()) {
    if (++w.keys > w.limits.max_parameter_keys) {
      return InvalidArgument("parameters have more than " +
                             std::to_string(w.limits.max_parameter_keys) + " keys");
    }
    std::string path = where.empty() ? key : where + "." + key;
    EC_RETURN_IF_ERROR(CheckString(key, path, w));
    EC_RETURN_IF_ERROR(CheckShape(item, depth + 1, path, w));
  }
  return Status::Ok();
}

bool IsIntegerText(const std::string& s) {
  size_t start = !s.empty() && s[0] == '-' ? 1 : 0;
  return s.size() > start && s.size() - start <= 19 &&
         std::all_of(s.begin() + start, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool MatchesType(const json& v, const std::string& type) {
  if (type == "STRING") return v.is_string();
  if (type == "INTEGER") {
    return v.is_number_integer() || (v.is_string() && IsIntegerText(v.get<std::string>()));
  }
  if (type == "BOOLEAN") return v.is_boolean();
  if (type == "DATE") return v.is_string() && CivilDay::Parse(v.get_ref<const std::string&>());
  if (type == "STRING_LIST") {
    return v.is_array() &&
           std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); });
  }
  return true;  // a type this API does not know: the registry validated it
}

bool IsAllowed(const json& v, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  if (v.is_array()) {
    return std::all_of(v.begin(), v.end(), [&](const json& e) { return IsAllowed(e, allowed); });
  }
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  return std::find(allowed.begin(), allowed.end(), text) != allowed.end();
}

Status CheckDeclared(const json& params, const registry::ExportDefinition& def) {
  for (const auto& [key, value] : params.items()) {
    // `&key = key`: clang before 16 cannot capture a structured binding itself.
    auto spec =
        std::find_if(def.parameters.begin(), def.parameters.end(),
                     [&key = key](const registry::ParameterSpec& p) { return p.name == key; });
    if (spec == def.parameters.end()) {
      return InvalidArgument("parameter " + key + " is not accepted by export type " + def.name);
    }
    if (!MatchesType(value, spec->type)) {
      return InvalidArgument("parameter " + key + " must be of type " + spec->type);
    }
    if (!IsAllowed(value, spec->allowed)) {
      return InvalidArgument("parameter " + key + " has a value outside its allowed values");
    }
  }
  for (const auto& spec : def.parameters) {
    if (spec.required && !params.contains(spec.name)) {
      return InvalidArgument("parameter " + spec.name + " is required");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> CanonicalParameters(const json& params, const registry::ExportDefinition& def,
                                          const task::LimitsOptions& limits) {
  if (!params.is_null() && !params.is_object()) {
    return InvalidArgument("parameters must be a JSON object");
  }
  json clean = json::object();
  if (params.is_object()) {
    for (const auto& [key, value] : params.items()) {
      if (!value.is_null()) clean[key] = value;
    }
  }
  Walk walk{limits};
  EC_RETURN_IF_ERROR(CheckShape(clean, 1, "", walk));
  EC_RETURN_IF_ERROR(CheckDeclared(clean, def));
  std::string canonical = DumpTolerant(clean);
  if (canonical.size() > static_cast<size_t>(limits.max_parameter_json_bytes)) {
    return InvalidArgument("parameters exceed " + std::to_string(limits.max_parameter_json_bytes) +
                           " bytes of JSON");
  }
  return canonical;
}

}  // namespace export_center::usecase
