#include "usecase/subscription_parameters.h"

#include <string>

#include "common/utf8.h"
#include "schedule/relative_date.h"

namespace export_center::usecase {

using json = nlohmann::json;

namespace {

bool IsRelative(const json& value) { return value.is_object() && value.contains("relative"); }

// One relative value, parsed; `field` names it in errors.
StatusOr<schedule::RelativeDate> ParseRelative(const json& value, const std::string& field) {
  for (const auto& [key, v] : value.items()) {
    if (key != "relative" && key != "bound") {
      return InvalidArgument(field + "." + utf8::Excerpt(key, 40) + ": unknown field");
    }
  }
  schedule::RelativeDate out;
  const json& range = value.at("relative");
  if (!range.is_string()) return InvalidArgument(field + ".relative: must be a string");
  auto parsed = schedule::ParseRelativeRange(range.get<std::string>());
  if (!parsed.ok()) return InvalidArgument(field + ".relative: " + parsed.status().message());
  out.range = *parsed;
  if (auto bound = value.find("bound"); bound != value.end() && !bound->is_null()) {
    if (!bound->is_string()) return InvalidArgument(field + ".bound: must be start or end");
    auto b = schedule::ParseRangeBound(bound->get<std::string>());
    if (!b.ok()) return InvalidArgument(field + ".bound: " + b.status().message());
    out.bound = *b;
  }
  return out;
}

}  // namespace

StatusOr<json> ReadRelativeParameters(const json& params, const registry::ExportDefinition& def) {
  json out = json::object();
  if (!params.is_object()) return out;
  for (const auto& [name, value] : params.items()) {
    if (!IsRelative(value)) continue;
    const std::string field = "parameters." + utf8::Excerpt(name, 64);
    const registry::ParameterSpec* spec = nullptr;
    for (const auto& p : def.parameters) {
      if (p.name == name) spec = &p;
    }
    if (spec == nullptr) return InvalidArgument(field + ": unknown parameter");
    if (spec->type != "DATE") {
      return InvalidArgument(field + ": a relative date is only for DATE parameters; " + name +
                             " is " + spec->type);
    }
    EC_ASSIGN_OR_RETURN(schedule::RelativeDate relative, ParseRelative(value, field));
    out[name] = {{"relative", std::string(schedule::RelativeRangeName(relative.range))},
                 {"bound", relative.bound == schedule::RangeBound::kStart ? "start" : "end"}};
  }
  return out;
}

StatusOr<json> ResolveRelativeParameters(const json& params, int64_t at_ms,
                                         const cctz::time_zone& zone) {
  if (!params.is_object()) return params;
  json out = params;
  for (const auto& [name, value] : params.items()) {
    if (!IsRelative(value)) continue;
    EC_ASSIGN_OR_RETURN(schedule::RelativeDate relative,
                        ParseRelative(value, "parameters." + name));
    out[name] = schedule::FormatDay(schedule::ResolveRelativeDate(relative, at_ms, zone));
  }
  return out;
}

}  // namespace export_center::usecase
