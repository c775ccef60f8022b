#pragma once
// The service's declared parameters against the definition's
// (docs/sql-template-route.md#declared-parameters): a SQL contract's
// `paramSchema` names the parameters its scenario reads. A declared type that
// differs from the definition's reads the value the user typed as something
// else: a contract error, the export fails before any SQL. A parameter the
// service declares that the definition does not have can never be given by a
// user; that is advice, not an error, so a service that ships a new optional
// parameter before the center's definition names it keeps exporting. The
// center runs this at the contract call (SqlTemplateSource) and `export-center
// check` per sql-template definition. Pure functions, no I/O; thread-safe.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "registry/export_definition.h"

namespace export_center::source {

// One declared parameter of `paramSchema`.
struct DeclaredParameter {
  std::string name;
  std::string type;  // as sent, upper-cased: STRING, INTEGER, DATE, …
};

// Parses `paramSchema`: absent (null) or `{}` declares nothing; otherwise
// `{"parameters":[{"name":…,"type":…}, …]}` (title and allowed are for people
// and are not read). InvalidArgument names what is malformed.
StatusOr<std::vector<DeclaredParameter>> ParseParamSchema(const nlohmann::json& param_schema);

// What the declared parameters say against the definition's, one sentence
// each naming the parameter, in the declared order: at most five of each kind,
// then "and N more"; the service's text is quoted cut (utf8::Excerpt). A definition parameter the
// service does not declare is neither (a service may document fewer than it
// reads).
struct ParamSchemaReview {
  std::vector<std::string> disagreements;  // same name, another type: an error
  std::vector<std::string> undeclared;     // not in the definition: advice
};
ParamSchemaReview ReviewParamSchema(const std::vector<DeclaredParameter>& declared,
                                    const std::vector<registry::ParameterSpec>& definition);

// Parses and reviews: InvalidArgument "contract: paramSchema…" when malformed,
// InvalidArgument "contract paramSchema disagrees with the definition's
// parameters: …" with every disagreement, else the parameters the definition
// lacks (usually none).
StatusOr<std::vector<std::string>> CheckParamSchema(
    const nlohmann::json& param_schema, const std::vector<registry::ParameterSpec>& definition);

}  // namespace export_center::source
