#pragma once
// Helpers of the two download endpoints: the RFC 6266 / RFC 5987
// Content-Disposition header, the RFC 9530 Repr-Digest header and single byte
// ranges (RFC 9110 §14). File
// names are made safe by utf8::SanitizeFileName (common/utf8.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace export_center::api {

// attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded>
// `file_name` must already be sanitized (utf8::SanitizeFileName).
std::string ContentDisposition(std::string_view file_name);

// "sha-256=:<base64 of the digest>:" (an RFC 8941 byte sequence) from the
// manifest's lower-case hex SHA-256; nullopt for anything that is not 64 hex
// digits, so a damaged row never yields a wrong header.
std::optional<std::string> ReprDigest(std::string_view sha256_hex);

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
