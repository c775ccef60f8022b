#pragma once
// Helpers of the two download endpoints: safe file names, the RFC 6266 /
// RFC 5987 Content-Disposition header, and single byte ranges (RFC 9110 §14).

#include <cstdint>
#include <string>
#include <string_view>

namespace export_center::api {

// Decodes one UTF-8 code point at the start of `s` into *cp and returns its
// length in bytes, or 0 when the bytes are not valid UTF-8 (overlong forms and
// surrogates included).
size_t DecodeUtf8(std::string_view s, char32_t* cp);

// Control (C0, DEL, C1) and bidirectional-formatting characters: they can
// disguise a name (a right-to-left override turns "exe.xlsx" around) or break a header.
bool IsControlOrBidi(char32_t cp);

// Drops path separators, control and bidi characters and invalid UTF-8, trims
// spaces and leading dots. Returns `fallback` when nothing is left.
std::string SanitizeFileName(std::string_view name, std::string_view fallback);

// attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded>
// `file_name` must already be sanitized.
std::string ContentDisposition(std::string_view file_name);

struct RangeDecision {
  enum Kind {
    kWhole,          // no usable Range header: answer 200 with everything
    kPartial,        // answer 206 with [offset, offset+length)
    kUnsatisfiable,  // answer 416 with Content-Range: bytes */size
  };
  Kind kind = kWhole;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Understands one "bytes=a-b", "bytes=a-" or "bytes=-n". Syntax errors and
// multi-range requests are ignored (kWhole), as RFC 9110 allows.
RangeDecision DecideRange(std::string_view range_header, uint64_t size);

}  // namespace export_center::api
