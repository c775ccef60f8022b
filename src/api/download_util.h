#pragma once
// Helpers of the two download endpoints: the RFC 6266 / RFC 5987
// Content-Disposition header, the RFC 9530 Repr-Digest header and single byte
// ranges (RFC 9110 §14), and the streamed body of a stored file. File
// names are made safe by utf8::SanitizeFileName (common/utf8.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "http/http_response.h"
#include "storage/export_storage.h"

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

// Streams [offset, offset+length) of a stored object; the server asks for
// each chunk only after the previous one was sent, so a 50 MB file never
// sits in memory, however slow the client.
class ObjectBodySource : public http::BodySource {
 public:
  ObjectBodySource(std::shared_ptr<storage::ObjectReader> reader, uint64_t offset, int64_t task_id)
      : reader_(std::move(reader)), next_(offset), task_id_(task_id) {}

  Status Next(size_t max_bytes, std::string* out) override;

 private:
  std::shared_ptr<storage::ObjectReader> reader_;
  uint64_t next_;
  const int64_t task_id_;
};

}  // namespace export_center::api
