#include "source/sql/param_schema.h"

#include <map>

#include "common/ascii.h"

namespace export_center::source {
namespace {

using nlohmann::json;

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
    return InvalidArgument(where + " (" + name->get<std::string>() + ") has no type");
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
  for (const DeclaredParameter& p : declared) {
    auto it = by_name.find(p.name);
    if (it == by_name.end()) {
      review.undeclared.push_back("the service reads parameter " + p.name +
                                  ", which the definition does not declare");
    } else if (ToUpperAscii(it->second->type) != p.type) {
      review.disagreements.push_back("parameter " + p.name + " is " + p.type +
                                     " to the service but " + it->second->type +
                                     " in the definition");
    }
  }
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
