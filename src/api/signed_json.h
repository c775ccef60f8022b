#pragma once
// The one format of this API's short-lived signed values: the signed download
// URL (download_token.h) and the task-event ticket (events_ticket.h).
//
// Value = base64url(JSON object) "." base64url(HMAC-SHA256(secret, context ||
// base64url(JSON))). The context names the value's purpose and version, so a
// MAC made for one never opens another. The payload is signed, not hidden.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace export_center::api {

std::string SignJson(std::string_view secret, std::string_view context,
                     const nlohmann::json& object);

// The object when `value` is at most `max_bytes`, well formed, strict JSON
// and signed for `context` with `secret` (compared in constant time);
// nullopt otherwise. Checking its fields is the caller's job.
std::optional<nlohmann::json> OpenSignedJson(std::string_view secret, std::string_view context,
                                             std::string_view value, size_t max_bytes);

}  // namespace export_center::api
