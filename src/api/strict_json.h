#pragma once
// Strict RFC 8259 parsing of request bodies (docs/http-api.md, "POST /export-tasks — create").
//
// nlohmann's parser alone accepts duplicate object keys (the last one wins),
// which would let two readers of one body disagree about its meaning. A
// validating SAX pass rejects them first, together with non-finite numbers
// and absurd nesting; the DOM is built only after the body passed.

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace export_center::api {

// Nesting beyond this is refused before any tree is built, by the check every
// reader of outside JSON shares (common/nesting.h: CheckJsonNesting), here
// tighter than its kMaxNesting: a request body's parameters nest at most 2.
inline constexpr int kMaxJsonNesting = 32;

// Parses one JSON text. One leading UTF-8 BOM is ignored. InvalidArgument for
// malformed JSON, invalid UTF-8, duplicate keys, NaN/Infinity or overflowing
// numbers, nesting deeper than kMaxJsonNesting ("JSON nested deeper than 32
// levels"), or trailing data; the message says what and where. Never throws.
StatusOr<nlohmann::json> ParseStrictJson(std::string_view text);

// OK for "application/json" with optional parameters where a charset, if
// given, is UTF-8 (case-insensitive). InvalidArgument otherwise.
Status CheckJsonContentType(std::string_view content_type);

}  // namespace export_center::api
