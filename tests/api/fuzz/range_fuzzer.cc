// libFuzzer target for the Range header of the two download endpoints
// (api/download_util.h DecideRange) and the Content-Disposition they send.
//
// The input is a Range header value; the file size is taken from its last
// eight bytes when it has more than eight (else a fixed size), so sizes
// near 0 and near 2^64 are tried. Properties beside "no crash": a partial
// answer lies inside the file and is not empty, and an unsatisfiable one is
// only given for a non-empty header.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "api/download_util.h"
#include "common/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using export_center::api::RangeDecision;
  std::string_view header(reinterpret_cast<const char*>(data), size);
  uint64_t file_size = 1000;
  if (size > 8) {
    std::memcpy(&file_size, data + size - 8, 8);
    header.remove_suffix(8);
  }
  for (uint64_t s : {file_size, uint64_t{0}, uint64_t{1}, uint64_t{1000}}) {
    const RangeDecision d = export_center::api::DecideRange(header, s);
    if (d.kind == RangeDecision::kPartial &&
        (d.length == 0 || d.offset >= s || d.length > s - d.offset)) {
      std::abort();
    }
    if (d.kind == RangeDecision::kUnsatisfiable && header.empty()) std::abort();
  }
  // The file name half of the download answer: whatever the name, the header
  // value is one line of printable ASCII.
  const std::string disposition = export_center::api::ContentDisposition(
      export_center::utf8::SanitizeFileName(header, "export"));
  for (char c : disposition) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) std::abort();
  }
  return 0;
}
