#include "source/business_refusal.h"

#include <regex>

namespace export_center::source {

std::optional<std::string> BusinessRefusalMessage(const Status& status) {
  if (status.code() != StatusCode::kInvalidArgument &&
      status.code() != StatusCode::kPermissionDenied && status.code() != StatusCode::kNotFound) {
    return std::nullopt;
  }
  // BusinessError's text (source/common/business_reply.cc): "<what> <code>:
  // <cleaned message>", `what` ending in "answered[ code| HTTP]". The first
  // match: context is only ever prefixed, and the cleaned message holds no
  // control characters for ".*" to stop at.
  static const std::regex kRefusal(R"(answered(?: code| HTTP)? 4[0-9][0-9]: (.+)$)");
  std::smatch m;
  if (!std::regex_search(status.message(), m, kRefusal)) return std::nullopt;
  return m[1].str();
}

}  // namespace export_center::source
