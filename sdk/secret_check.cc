#include "sdk/secret_check.h"

#include <stdexcept>

namespace export_center::sdk {

std::optional<std::string> SecretProblem(std::string_view value, size_t min_bytes) {
  if (value.empty()) return "is empty";
  // `${NAME}`, `${NAME:default}`: a brace pair after a dollar, anywhere.
  size_t open = value.find("${");
  if (open != std::string_view::npos && value.find('}', open + 2) != std::string_view::npos) {
    bool whole = open == 0 && value.back() == '}' && value.find('}') == value.size() - 1;
    return whole ? "is the unresolved placeholder " + std::string(value)
                 : std::string("contains an unresolved ${...} placeholder");
  }
  if (value.size() < min_bytes) {
    return "is too short (" + std::to_string(value.size()) + " bytes; at least " +
           std::to_string(min_bytes) + ")";
  }
  return std::nullopt;
}

void RequireSecret(std::string_view name, std::string_view value, size_t min_bytes) {
  if (auto problem = SecretProblem(value, min_bytes)) {
    throw std::invalid_argument(std::string(name) + " " + *problem);
  }
}

}  // namespace export_center::sdk
