#include "usecase/file_password.h"

#include <nlohmann/json.hpp>

#include "common/utf8.h"

namespace export_center::usecase {
namespace {

bool Decides(const task::ColumnPolicy& policy, const std::string& key) {
  for (const task::ColumnDecision& d : policy.decisions) {
    if (d.key == key) return true;
  }
  return false;
}

}  // namespace

Status CheckFilePasswordStrength(std::string_view password) {
  const std::string rule = std::string(" (the rule: ") + kFilePasswordRule + ")";
  if (!utf8::IsValid(password)) return InvalidArgument("filePassword is not valid UTF-8" + rule);
  const size_t chars = utf8::CountCodePoints(password);
  if (chars < kMinFilePasswordChars) {
    return InvalidArgument("filePassword is too short: at least " +
                           std::to_string(kMinFilePasswordChars) + " characters" + rule);
  }
  if (chars > kMaxFilePasswordChars) {
    return InvalidArgument("filePassword is too long: at most " +
                           std::to_string(kMaxFilePasswordChars) + " characters" + rule);
  }
  bool lower = false, upper = false, digit = false, other = false;
  std::string_view rest = password;
  while (!rest.empty()) {
    char32_t cp = 0;
    const size_t n = utf8::Decode(rest, &cp);
    if (n == 0) return InvalidArgument("filePassword is not valid UTF-8" + rule);
    if (utf8::IsControlOrBidi(cp)) {
      return InvalidArgument("filePassword must not contain control characters" + rule);
    }
    if (cp >= 'a' && cp <= 'z') {
      lower = true;
    } else if (cp >= 'A' && cp <= 'Z') {
      upper = true;
    } else if (cp >= '0' && cp <= '9') {
      digit = true;
    } else {
      other = true;
    }
    rest.remove_prefix(n);
  }
  if (int{lower} + int{upper} + int{digit} + int{other} < 2) {
    return InvalidArgument("filePassword is all one kind of character" + rule);
  }
  return Status::Ok();
}

std::string FilePasswordRequiredBy(const registry::ExportDefinition& def,
                                   const task::ColumnPolicy& policy) {
  if (def.file_password == registry::FilePasswordRule::kRequired) {
    return "export type " + def.name + " requires a file password";
  }
  for (const task::ColumnRule& rule : def.column_rules) {
    if (rule.require_file_password && !Decides(policy, rule.key)) {
      return "the file holds column " + rule.key + " in full, whose rule requires a file password";
    }
  }
  return "";
}

std::string FilePasswordPolicyName(const registry::ExportDefinition& def,
                                   const task::ColumnPolicy& policy) {
  if (!FilePasswordRequiredBy(def, policy).empty()) return "REQUIRED";
  return def.file_password == registry::FilePasswordRule::kNone ? "NONE" : "OPTIONAL";
}

StatusOr<std::string> ReadFilePassword(const nlohmann::json& body,
                                       const registry::ExportDefinition& def) {
  auto found = body.find("filePassword");
  if (found == body.end() || found->is_null()) return std::string();
  if (!found->is_string()) return InvalidArgument("filePassword must be a string");
  if (def.file_password == registry::FilePasswordRule::kNone) {
    return InvalidArgument("filePassword is not allowed: export type " + def.name +
                           " does not take a file password (file-password: none)");
  }
  const std::string& password = found->get_ref<const std::string&>();
  EC_RETURN_IF_ERROR(CheckFilePasswordStrength(password));
  return password;
}

}  // namespace export_center::usecase
