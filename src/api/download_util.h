#pragma once
// Helpers of the two download endpoints: the RFC 6266 / RFC 5987
// Content-Disposition header and single byte ranges (RFC 9110 §14). File
// names are made safe by utf8::SanitizeFileName (common/utf8.h).

#include <cstdint>
#include <string>
#include <string_view>

namespace export_center::api {

// attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded>
// `file_name` must already be sanitized (utf8::SanitizeFileName).
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
