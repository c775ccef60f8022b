#pragma once
// The rule for the secrets a business service configures: the internal token
// the center presents (X-Internal-Service-Token) and the snapshot secret. A
// secret is refused when it is empty, shorter than its minimum, or still an
// unresolved placeholder such as `${EXPORT_CENTER_INTERNAL_TOKEN}` (a config
// template copied without its variable would otherwise become the secret,
// and a caller sending that text would be let in). The same rule as the
// Java SDK (io.exportcenter.sdk.Secrets) and the center's own secrets.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace export_center::sdk {

// A bearer token compared whole: 16 bytes of a random token are 128 bits.
inline constexpr size_t kMinInternalTokenBytes = 16;
// An HMAC-SHA256 key: as long as the hash (RFC 2104 §3).
inline constexpr size_t kMinSnapshotSecretBytes = 32;

// Why `value` cannot serve as a secret ("is empty", "is too short (5 bytes;
// at least 16)", "is the unresolved placeholder ${X}"), or nullopt when it
// can. Never quotes a secret, only a placeholder's variable name.
std::optional<std::string> SecretProblem(std::string_view value, size_t min_bytes);

// Throws std::invalid_argument("NAME PROBLEM") when SecretProblem finds one;
// `name` is the setting's name (customer-service.internal-token).
void RequireSecret(std::string_view name, std::string_view value, size_t min_bytes);

}  // namespace export_center::sdk
