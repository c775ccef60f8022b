#include "source/sql/param_schema.h"

#include <map>

#include "common/ascii.h"
#include "common/utf8.h"

namespace export_center::source {
namespace {

using nlohmann::json;

// The service's names and types are any text it sends: quoted cut and valid
// (they end in a task's failure message and in log lines), and at most this
// many findings of each kind are listed, the rest counted.
constexpr size_t kMaxShownBytes = 64;
constexpr size_t kMaxListedFindings = 5;

std::string Shown(std::string_view text) { return utf8::Excerpt(text, kMaxShownBytes); }

// Appends `finding` unless the list is full; then counts it in *unlisted.
void AddFinding(std::vector<std::string>* findings, std::string finding, size_t* unlisted) {
  if (findings->size() < kMaxListedFindings) {
    findings->push_back(std::move(finding));
  } else {
    ++*unlisted;
  }
}

void CloseFindings(std::vector<std::string>* findings, size_t unlisted) {
  if (unlisted > 0) findings->push_back("and " + std::to_string(unlisted) + " more");
}

// One entry of `parameters`; `index` names it in the error.
StatusOr<DeclaredParameter> ParseDeclared(const json& entry, size_t index) {
  std::string where = "paramSchema.parameters[" + std::to_string(index) + "]";
  if (!entry.is_object()) return InvalidArgument(where + " is not an object");
  auto name = entry.find("name");
  if (name == entry.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
    return InvalidArgument(where + " has no name");
  }
  auto type = entry.find("type");
  if (type == entry.end() || !type->is_string()) {
    return InvalidArgument(where + " (" + Shown(name->get_ref<const std::string&>()) +
                           ") has no type");
  }
  return DeclaredParameter{name->get<std::string>(), ToUpperAscii(type->get<std::string>())};
}

}  // namespace

StatusOr<std::vector<DeclaredParameter>> ParseParamSchema(const json& param_schema) {
  std::vector<DeclaredParameter> declared;
  if (param_schema.is_null() || (param_schema.is_object() && param_schema.empty())) {
    return declared;
  }
  auto parameters = param_schema.is_object() ? param_schema.find("parameters") : param_schema.end();
  if (parameters == param_schema.end() || !parameters->is_array()) {
    return InvalidArgument(R"(paramSchema is not {"parameters":[…]})");
  }
  for (size_t i = 0; i < parameters->size(); ++i) {
    EC_ASSIGN_OR_RETURN(DeclaredParameter p, ParseDeclared((*parameters)[i], i));
    declared.push_back(std::move(p));
  }
  return declared;
}

ParamSchemaReview ReviewParamSchema(const std::vector<DeclaredParameter>& declared,
                                    const std::vector<registry::ParameterSpec>& definition) {
  std::map<std::string, const registry::ParameterSpec*> by_name;
  for (const auto& spec : definition) by_name[spec.name] = &spec;
  ParamSchemaReview review;
  size_t unlisted_undeclared = 0;
  size_t unlisted_disagreements = 0;
  for (const DeclaredParameter& p : declared) {
    auto it = by_name.find(p.name);
    if (it == by_name.end()) {
      AddFinding(&review.undeclared,
                 "the service reads parameter " + Shown(p.name) +
                     ", which the definition does not declare",
                 &unlisted_undeclared);
    } else if (ToUpperAscii(it->second->type) != p.type) {
      AddFinding(&review.disagreements,
                 "parameter " + p.name + " is " + Shown(p.type) + " to the service but " +
                     it->second->type + " in the definition",
                 &unlisted_disagreements);
    }
  }
  CloseFindings(&review.undeclared, unlisted_undeclared);
  CloseFindings(&review.disagreements, unlisted_disagreements);
  return review;
}

StatusOr<std::vector<std::string>> CheckParamSchema(
    const json& param_schema, const std::vector<registry::ParameterSpec>& definition) {
  auto declared = ParseParamSchema(param_schema);
  if (!declared.ok()) return declared.status().WithContext("contract");
  ParamSchemaReview review = ReviewParamSchema(*declared, definition);
  if (review.disagreements.empty()) return std::move(review.undeclared);
  std::string message = "contract paramSchema disagrees with the definition's parameters: ";
  for (size_t i = 0; i < review.disagreements.size(); ++i) {
    message += (i == 0 ? "" : "; ") + review.disagreements[i];
  }
  return InvalidArgument(message);
}

}  // namespace export_center::source
