#pragma once
// ByteSink: where a writer puts the bytes of a file, in order.
//
// Storage hands out a sink per object; writers only append. Wrappers add
// behaviour without touching backends (docs/conventions.md#wrappers-and-metrics):
// CountingSink enforces the file-size cap while the file is being written,
// never after.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace export_center {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends bytes. Fails with Unavailable on an I/O error, LimitExceeded when a
  // cap is crossed. After a failure the sink must not be used again.
  virtual Status Append(std::string_view bytes) = 0;
};

// Counts bytes and fails the moment the total would exceed max_bytes.
class CountingSink final : public ByteSink {
 public:
  // max_bytes == 0 means no cap. `inner` is not owned and must outlive this.
  CountingSink(ByteSink* inner, uint64_t max_bytes) : inner_(inner), max_bytes_(max_bytes) {}

  Status Append(std::string_view bytes) override;
  uint64_t bytes_written() const { return written_; }

 private:
  ByteSink* inner_;
  uint64_t max_bytes_;
  uint64_t written_ = 0;
};

}  // namespace export_center
