#pragma once
// GzipSink: a ByteSink wrapper that gzips (RFC 1952) everything appended to
// it into another sink, streaming. Used for `.csv.gz`. Internal to render/.
//
// The header carries mtime 0 and no name, so output is reproducible. The
// inner sink (usually a CountingSink) sees compressed bytes as zlib emits
// them, so the file-size cap applies to the compressed file, in flight.

#include <memory>
#include <string_view>

#include "common/byte_sink.h"

namespace export_center::render::internal {

class GzipSink final : public ByteSink {
 public:
  // `inner` is not owned and must outlive this. `level` is zlib's 0..9.
  GzipSink(ByteSink* inner, int level);
  ~GzipSink() override;
  GzipSink(const GzipSink&) = delete;
  GzipSink& operator=(const GzipSink&) = delete;

  Status Append(std::string_view bytes) override;
  // Writes the trailer (CRC-32, size). No Append after Finish.
  Status Finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace export_center::render::internal
