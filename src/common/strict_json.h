#pragma once
// Strict RFC 8259 parsing of outside JSON: request bodies (api/), a token's
// header and claims and a JWK Set (identity/).
//
// nlohmann's parser alone accepts duplicate object keys (the last one wins),
// which would let two readers of one text disagree about its meaning. A
// validating SAX pass rejects them first, together with non-finite numbers
// and absurd nesting; the DOM is built only after the text passed.
//
// nlohmann's header-only library is the one JSON library ec_common exposes,
// for this function; DumpTolerant and the nesting checks stay templates.

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace export_center {

// Nesting beyond this is refused before any tree is built, by the check every
// reader of outside JSON shares (common/nesting.h: CheckJsonNesting), here
// tighter than its kMaxNesting: a request body's parameters nest at most 2.
inline constexpr int kMaxJsonNesting = 32;

// Parses one JSON text. One leading UTF-8 BOM is ignored. InvalidArgument for
// malformed JSON, invalid UTF-8, duplicate keys, NaN/Infinity or overflowing
// numbers, nesting deeper than kMaxJsonNesting ("JSON nested deeper than 32
// levels"), or trailing data; the message says what and where. Never throws.
StatusOr<nlohmann::json> ParseStrictJson(std::string_view text);

}  // namespace export_center
