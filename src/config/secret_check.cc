#include "config/secret_check.h"

#include <regex>

namespace export_center::config {
namespace {

// `${NAME}`, `${NAME:default}`, `${NAME?message}`: the shapes Spring, Compose
// and shells use; a secret copied from any of their templates.
const std::regex& Placeholder() {
  static const std::regex kPlaceholder(R"(\$\{[^}]*\})");
  return kPlaceholder;
}

}  // namespace

bool HasUnresolvedPlaceholder(std::string_view value) {
  return std::regex_search(value.begin(), value.end(), Placeholder());
}

void CheckSecret(const std::string& value, size_t min_bytes, const std::string& path,
                 const std::string& env, ErrorList* errors) {
  std::string at_least =
      min_bytes == 0 ? "the credential itself"
                     : "a random string of at least " + std::to_string(min_bytes) + " bytes";
  if (value.empty()) {
    errors->Add(path, env.empty() ? "is required" : "is required (or set " + env + ")", at_least);
    return;
  }
  std::smatch placeholder;
  if (std::regex_search(value, placeholder, Placeholder())) {
    // Only a value that is the placeholder whole is quoted: it names a
    // variable, not a secret. Anything around it might be one.
    std::string what = placeholder.length() == static_cast<std::ptrdiff_t>(value.size())
                           ? "is the unresolved placeholder " + value
                           : "contains an unresolved ${...} placeholder";
    errors->Add(path,
                what + ": the configuration file expands no variables" +
                    (env.empty() ? "" : "; set " + env + " instead"),
                at_least);
    return;
  }
  if (value.size() < min_bytes) {
    errors->Add(path, "is too short (" + std::to_string(value.size()) + " bytes)",
                "at least " + std::to_string(min_bytes) + " bytes");
  }
}

void CheckOptionalSecret(const std::string& value, size_t min_bytes, const std::string& path,
                         const std::string& env, ErrorList* errors) {
  if (!value.empty()) CheckSecret(value, min_bytes, path, env, errors);
}

}  // namespace export_center::config
