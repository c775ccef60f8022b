#pragma once
// How the center reads a business service's answer, shared by both data
// routes (provider batches and the SQL contract): the HTTP status or the
// envelope code becomes a Status in one place, and the service's message is
// made safe to store and show.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center::source {

// No control characters, at most 200 bytes, cut at a UTF-8 boundary.
std::string CleanBusinessMessage(std::string_view text);

// 5xx, 408 and 429 are worth retrying (Unavailable); 401/403 PermissionDenied;
// 404 NotFound; any other code is the service's final word (InvalidArgument).
// The message reads "<what> <code>: <cleaned message>".
Status BusinessError(int code, std::string_view what, std::string_view message);

// The envelope's `code` as a number ("200" or 200), nullopt when absent or
// not a three-digit code.
std::optional<int> EnvelopeCode(const nlohmann::json& body);
// The envelope's `message`, or "".
std::string EnvelopeMessage(const nlohmann::json& body);

}  // namespace export_center::source
