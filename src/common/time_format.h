#pragma once
// Epoch milliseconds as text: the one formatter of every time the center
// writes into JSON (task views, download audit, the command's occurredAt,
// webhook bodies).
//
// Pure and thread-safe.

#include <cstdint>
#include <string>

namespace export_center {

// `epoch_ms` (milliseconds since 1970-01-01T00:00:00Z) as ISO 8601 / RFC 3339
// UTC with exactly three fraction digits: "2024-05-01T08:30:00.123Z".
// Milliseconds are never rounded: the second is the floor of the time, so a
// time before 1970 is the earlier second plus its positive remainder
// (-1 is "1969-12-31T23:59:59.999Z", never "1970-01-01T00:00:00.-01Z").
std::string FormatIsoMillis(int64_t epoch_ms);

}  // namespace export_center
