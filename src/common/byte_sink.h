#pragma once
// ByteSink: where a writer puts the bytes of a file, in order.
//
// Storage hands out a sink per object; writers only append. Wrappers add
// behaviour without touching backends (docs/conventions.md#wrappers-and-metrics):
// CountingSink enforces the file-size cap while the file is being written,
// never after; Sha256Sink digests the bytes on their way, so a file's manifest
// costs no second read.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
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

// Passes bytes on and digests those the inner sink accepted (SHA-256, OpenSSL).
class Sha256Sink final : public ByteSink {
 public:
  using Digest = std::array<unsigned char, 32>;
  // `inner` is not owned and must outlive this.
  explicit Sha256Sink(ByteSink* inner);
  ~Sha256Sink() override;

  Status Append(std::string_view bytes) override;
  // The digest of every byte appended so far; the sink may go on.
  Digest digest() const;

 private:
  struct State;
  ByteSink* inner_;
  std::unique_ptr<State> state_;
};

// Lower-case hex of a digest (64 characters for SHA-256).
std::string HexOf(const Sha256Sink::Digest& digest);

}  // namespace export_center
