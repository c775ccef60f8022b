#pragma once
// Template safety of the sql-template route (docs/sql-template.md#what--may-read):
// which task parameters a contract's `${}` may not read, the parameters a
// template is rendered with, and the check of every template of a contract
// before any of them runs. Pure functions, no I/O; thread-safe.

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "registry/registry.h"
#include "source/sql/sql_contract_client.h"
#include "task/task.h"

namespace export_center::source {

// The parameter names a contract's `${}` may not read: every declared
// parameter a user fills freely (a STRING or STRING_LIST without an `allowed`
// list), whether or not this task gives it, and every given value that is
// not provably harmless. Harmless: a JSON number, boolean or null; a value
// (every element, for a list) in the definition's `allowed` list; a DATE
// that is exactly yyyy-MM-dd. Values are checked again here, not trusted
// from create time, because the definition may have changed since.
// tenantId, appCode and requestedBy are server-bound and never untrusted.
std::set<std::string> UntrustedParameters(const nlohmann::json& task_parameters,
                                          const std::vector<registry::ParameterSpec>& specs);

// The engine's parameters: the task's parameters plus the server-side
// tenantId/appCode/requestedBy (which win). InvalidArgument when
// `parameters_json` is not a JSON object.
StatusOr<nlohmann::json> TemplateParameters(const std::string& parameters_json,
                                            const std::string& tenant_id, task::AppCode app_code,
                                            const std::string& requested_by);

// The names an enrich SQL's `${}` may not read: the main template's, and the
// page's key values ("keys"), which are business data users type too.
std::set<std::string> EnrichUntrusted(const std::set<std::string>& untrusted);

// A `${}` of a contract's template that reads an untrusted value.
struct UnsafeTemplateUse {
  std::string where;    // "sqlTemplate" or "enrich group NAME"
  std::string message;  // sql_template::UnsafeDollar::Message()
};

// Checks every template of `contract`, enrich SQL included (against
// EnrichUntrusted), for a `${}` over `untrusted`. The first found, or none;
// an error when a template does not parse.
StatusOr<std::optional<UnsafeTemplateUse>> FindUnsafeTemplateUse(
    const SqlContract& contract, const std::set<std::string>& untrusted);

// A scanned statement may end in one ';', which must not end up inside
// "(…) _t": the statement without it.
std::string StripTrailingSemicolon(std::string sql);

}  // namespace export_center::source
