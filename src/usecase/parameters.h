#pragma once
// Validation and canonical form of the `parameters` object of a create
// request (docs/http-api.md, "POST /export-tasks — create").
//
// Limits: the parameters object is depth 1, a nested object or array depth 2,
// nothing deeper; at most max_parameter_keys keys over all levels; strings
// (values and keys) at most max_parameter_string_chars code points; the
// canonical JSON at most max_parameter_json_bytes. Only declared parameters
// are accepted, with their declared type and `allowed` values.
//
// Canonical JSON: keys sorted at every level (nlohmann's default std::map),
// no whitespace, UTF-8 unescaped, top-level nulls dropped (null means "not
// given"). Its SHA-256 is the dedupe key params_hash.

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "registry/export_definition.h"
#include "task/limits.h"

namespace export_center::usecase {

// `params` may be null (treated as {}). Returns the canonical JSON text or
// InvalidArgument naming the offending parameter.
StatusOr<std::string> CanonicalParameters(const nlohmann::json& params,
                                          const registry::ExportDefinition& def,
                                          const task::LimitsOptions& limits);

}  // namespace export_center::usecase
