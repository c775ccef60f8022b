#include "usecase/create_request.h"

#include <nlohmann/json.hpp>

#include "common/utf8.h"
#include "usecase/access.h"
#include "usecase/file_password.h"
#include "usecase/parameters.h"

namespace export_center::usecase {

using json = nlohmann::json;

Status CheckTaskName(const std::string& name) {
  size_t chars = utf8::CountCodePoints(name);
  if (chars < 1 || chars > 100) return InvalidArgument("taskName must be 1-100 characters");
  bool blank = true;
  std::string_view rest = name;
  while (!rest.empty()) {
    char32_t cp = 0;
    size_t n = utf8::Decode(rest, &cp);
    if (n == 0) return InvalidArgument("taskName is not valid UTF-8");
    if (utf8::IsControlOrBidi(cp)) {
      return InvalidArgument("taskName must not contain control characters");
    }
    if (cp != ' ' && cp != 0x3000) blank = false;
    rest.remove_prefix(n);
  }
  if (blank) return InvalidArgument("taskName must not be blank");
  return Status::Ok();
}

StatusOr<CreateRequest> ExportAgainRequest(
    const task::Task& old, const Principal& p,
    std::shared_ptr<const registry::RegistrySnapshot> snapshot, const task::LimitsOptions& limits,
    const std::string& file_password) {
  // A password-protected file stays protected: its password was not kept, so
  // a new one is needed — unless the type no longer takes one.
  const registry::ExportDefinition* def = snapshot->Find(old.export_type);
  const bool takes_password =
      def != nullptr && def->file_password != registry::FilePasswordRule::kNone;
  if (old.encrypted && takes_password && file_password.empty()) {
    return InvalidArgument("filePassword is required: task " + std::to_string(old.id) +
                           "'s file was password-protected and its password is not kept; "
                           "export it again with a new filePassword");
  }
  // The stored parameters are the canonical JSON the create wrote; parsed
  // tolerantly since they are ours, then checked like a new body.
  json params = json::parse(old.parameters_json, nullptr, false);
  if (params.is_discarded()) return Internal("task " + std::to_string(old.id) + ": bad parameters");
  json body = {{"exportType", old.export_type},
               {"format", std::string(task::ToString(old.format))},
               {"taskName", old.task_name},
               {"parameters", std::move(params)}};
  // The old task's language as recorded, "" included: the same titles again.
  if (!old.locale.empty()) body["locale"] = old.locale;
  if (!file_password.empty()) body["filePassword"] = file_password;
  return CheckCreateBody(body, p, std::move(snapshot), limits);
}

StatusOr<CreateRequest> CheckCreateBody(const json& body, const Principal& p,
                                        std::shared_ptr<const registry::RegistrySnapshot> snapshot,
                                        const task::LimitsOptions& limits) {
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key != "exportType" && key != "format" && key != "taskName" && key != "parameters" &&
        key != "locale" && key != "filePassword") {
      return InvalidArgument("unknown field " + key);
    }
  }
  auto type = body.find("exportType");
  if (type == body.end() || !type->is_string() || type->get_ref<const std::string&>().empty()) {
    return InvalidArgument("exportType is required");
  }
  CreateRequest out;
  out.snapshot = std::move(snapshot);
  out.definition = out.snapshot->Find(type->get<std::string>());
  if (out.definition == nullptr) {
    return InvalidArgument("unknown exportType " + type->get<std::string>());
  }
  const registry::ExportDefinition& def = *out.definition;
  EC_RETURN_IF_ERROR(CheckCanRun(p, def));

  if (auto f = body.find("format"); f != body.end() && !f->is_null()) {
    auto parsed = f->is_string() ? task::ParseFileFormat(f->get<std::string>()) : std::nullopt;
    if (!parsed) return InvalidArgument("format must be XLSX or CSV");
    out.format = *parsed;
  }
  out.task_name = def.title.empty() ? def.name : def.title;
  if (auto n = body.find("taskName"); n != body.end() && !n->is_null()) {
    if (!n->is_string()) return InvalidArgument("taskName must be a string");
    out.task_name = n->get<std::string>();
    EC_RETURN_IF_ERROR(CheckTaskName(out.task_name));
  }
  if (auto l = body.find("locale"); l != body.end() && !l->is_null()) {
    if (!l->is_string() || !task::IsLocaleTag(l->get_ref<const std::string&>())) {
      return InvalidArgument(
          "locale must be a language tag such as zh-CN or en (letters, digits and hyphens, at "
          "most 35 characters)");
    }
    out.locale = l->get<std::string>();
  }
  json params = body.contains("parameters") ? body.at("parameters") : json();
  EC_ASSIGN_OR_RETURN(out.canonical_parameters, CanonicalParameters(params, def, limits));
  out.column_policy = task::DecideColumnPolicy(
      def.column_rules, [&p](const std::string& perm) { return p.HasPerm(perm); });
  EC_ASSIGN_OR_RETURN(out.file_password, ReadFilePassword(body, def));
  out.file_password_required_by = FilePasswordRequiredBy(def, out.column_policy);
  return out;
}

Status CheckFilePasswordGiven(const CreateRequest& request) {
  if (request.file_password_required_by.empty() || !request.file_password.empty()) {
    return Status::Ok();
  }
  return InvalidArgument("filePassword is required: " + request.file_password_required_by +
                         " (the rule: " + kFilePasswordRule + ")");
}

}  // namespace export_center::usecase
