#pragma once
// The one rule for every secret the center reads from its configuration
// (internal tokens, the JWT HS256 secret, the download-URL and webhook signing
// secrets, the metrics bearer token, third-party credentials): refused at
// config load, under its key path, when it is empty but required, shorter than
// its minimum, or still an unresolved placeholder such as
// `${EXPORT_CENTER_JWT_SECRET}` (YAML expands nothing: a template copied
// without its variable would otherwise be taken as the secret itself).
// Messages never quote the value, only a placeholder's variable name.
// Private to config/, like yaml_reader.h.

#include <cstddef>
#include <string>
#include <string_view>

#include "config/yaml_reader.h"

namespace export_center::config {

// Bearer tokens compared as a whole (provider-services.*.internal-token,
// auth.metrics-bearer-token): 16 bytes of a random token are 128 bits.
inline constexpr size_t kMinTokenBytes = 16;

// True when `value` holds a `${...}` placeholder nobody resolved.
bool HasUnresolvedPlaceholder(std::string_view value);

// A required secret: adds one problem under `path` when `value` is empty
// ("is required (or set ENV)"; `env` may be empty when no variable supplies
// it), shorter than `min_bytes`, or an unresolved placeholder.
void CheckSecret(const std::string& value, size_t min_bytes, const std::string& path,
                 const std::string& env, ErrorList* errors);

// A secret that may be left empty (off, or required only with another key,
// which the caller checks): checked as CheckSecret only when set. A
// `min_bytes` of 0 checks only for a placeholder (credentials whose length
// another system decides, such as an S3 secret key).
void CheckOptionalSecret(const std::string& value, size_t min_bytes, const std::string& path,
                         const std::string& env, ErrorList* errors);

}  // namespace export_center::config
