#pragma once
// Identifiers: 64-bit task/outbox ids and UUIDs for event ids.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace export_center {

// Snowflake-style ids: 41 bits of milliseconds since 2024-01-01, 10 bits of
// random node id chosen at start-up, 12 bits of sequence. Unique across
// processes with high probability and roughly time-ordered; thread-safe.
int64_t NextId();

// Random version-4 UUID, lower case with dashes.
std::string NewUuid();

// Parses an id as the API accepts it: 1-19 decimal digits, no leading zero,
// within int64. Anything else is nullopt.
std::optional<int64_t> ParseId(std::string_view text);

}  // namespace export_center
