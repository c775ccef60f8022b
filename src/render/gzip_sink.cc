#include "render/gzip_sink.h"

#include <zlib.h>

#include <algorithm>
#include <string>

namespace export_center::render::internal {

class GzipSink::Impl {
 public:
  Impl(ByteSink* inner, int level) : inner_(inner), out_(256 * 1024, '\0') {
    // windowBits 15 + 16: a gzip wrapper instead of zlib's.
    ok_ = deflateInit2(&z_, std::clamp(level, 0, 9), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) ==
          Z_OK;
  }
  ~Impl() {
    if (ok_) deflateEnd(&z_);
  }

  Status Run(std::string_view in, int flush) {
    if (!status_.ok()) return status_;
    if (!ok_) return status_ = Internal("zlib deflateInit2 failed");
    constexpr size_t kSlice = 1u << 30;  // zlib lengths are 32-bit
    do {
      const size_t n = std::min(in.size(), kSlice);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      z_.avail_in = static_cast<uInt>(n);
      in.remove_prefix(n);
      const int f = in.empty() ? flush : Z_NO_FLUSH;
      for (;;) {
        z_.next_out = reinterpret_cast<Bytef*>(out_.data());
        z_.avail_out = static_cast<uInt>(out_.size());
        const int rc = deflate(&z_, f);
        if (rc == Z_STREAM_ERROR) return status_ = Internal("zlib deflate failed");
        const size_t produced = out_.size() - z_.avail_out;
        if (produced > 0) {
          Status s = inner_->Append(std::string_view(out_.data(), produced));
          if (!s.ok()) return status_ = s;
        }
        const bool done = f == Z_FINISH ? rc == Z_STREAM_END : z_.avail_out != 0;
        if (done) break;
      }
    } while (!in.empty());
    return Status::Ok();
  }

 private:
  ByteSink* inner_;
  z_stream z_{};
  bool ok_ = false;
  std::string out_;
  Status status_;
};

GzipSink::GzipSink(ByteSink* inner, int level) : impl_(std::make_unique<Impl>(inner, level)) {}
GzipSink::~GzipSink() = default;

Status GzipSink::Append(std::string_view bytes) { return impl_->Run(bytes, Z_NO_FLUSH); }
Status GzipSink::Finish() { return impl_->Run({}, Z_FINISH); }

}  // namespace export_center::render::internal
