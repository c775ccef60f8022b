#include "render/encryption/encrypted_writers.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "render/csv_writer.h"
#include "render/encryption/agile_package.h"
#include "render/encryption/compound_file.h"
#include "render/encryption/file_key_material.h"
#include "render/zip_stream.h"

namespace export_center::render::encryption {
namespace {

constexpr size_t kSpoolBufferBytes = 256 * 1024;

Status SpoolError(const char* what) {
  return Unavailable(std::string("encrypted file spool: ") + what + ": " + std::strerror(errno));
}

// Ciphertext waiting for the compound file to be written around it: a
// temporary file unlinked the moment it exists, so a crash leaves nothing
// behind (and only ciphertext ever reaches it).
class CiphertextSpool {
 public:
  CiphertextSpool() = default;
  ~CiphertextSpool() {
    if (fd_ >= 0) ::close(fd_);
  }
  CiphertextSpool(const CiphertextSpool&) = delete;
  CiphertextSpool& operator=(const CiphertextSpool&) = delete;

  Status Open(const std::string& directory) {
    std::error_code ec;
    std::string dir =
        directory.empty() ? std::filesystem::temp_directory_path(ec).string() : directory;
    if (dir.empty()) dir = "/tmp";
    std::string path = dir + "/ec-encrypted-XXXXXX";
    fd_ = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd_ < 0) return SpoolError(("cannot create a file in " + dir).c_str());
    if (::unlink(path.c_str()) != 0) return SpoolError("unlink");
    return Status::Ok();
  }

  Status Write(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return SpoolError("write");
      bytes.remove_prefix(static_cast<size_t>(n));
      size_ += static_cast<uint64_t>(n);
    }
    return Status::Ok();
  }

  // Hands the spooled bytes, in order, to `each` in chunks of `buffer`'s size.
  template <typename F>
  Status ReadAll(std::string* buffer, F&& each) {
    if (::lseek(fd_, 0, SEEK_SET) != 0) return SpoolError("seek");
    uint64_t left = size_;
    while (left > 0) {
      const ssize_t n = ::read(fd_, buffer->data(), std::min<uint64_t>(left, buffer->size()));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return SpoolError("read");
      left -= static_cast<uint64_t>(n);
      EC_RETURN_IF_ERROR(each(std::string_view(buffer->data(), static_cast<size_t>(n))));
    }
    return Status::Ok();
  }

  uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Where the inner writer's plaintext goes: cut into segments, each encrypted
// as soon as it is whole, the ciphertext collected and spooled.
class SegmentSink final : public ByteSink {
 public:
  SegmentSink(AgilePackageEncryptor* encryptor, CiphertextSpool* spool)
      : encryptor_(encryptor), spool_(spool) {
    segment_.reserve(kAgileSegmentBytes);
  }
  ~SegmentSink() override { OPENSSL_cleanse(segment_.data(), segment_.size()); }

  Status Append(std::string_view bytes) override {
    while (!bytes.empty()) {
      const size_t n = std::min(bytes.size(), kAgileSegmentBytes - segment_.size());
      segment_.append(bytes.substr(0, n));
      bytes.remove_prefix(n);
      plain_bytes_ += n;
      if (segment_.size() == kAgileSegmentBytes) EC_RETURN_IF_ERROR(EncryptSegment());
    }
    return Status::Ok();
  }

  // Encrypts the last, partial segment and empties the buffer into the spool.
  Status Finish() {
    if (!segment_.empty()) EC_RETURN_IF_ERROR(EncryptSegment());
    return Drain();
  }

  uint64_t plain_bytes() const { return plain_bytes_; }

 private:
  Status EncryptSegment() {
    if (next_segment_ == UINT32_MAX) return LimitExceeded("agile: package too large");
    EC_RETURN_IF_ERROR(encryptor_->EncryptSegment(next_segment_++, segment_, &ciphertext_));
    OPENSSL_cleanse(segment_.data(), segment_.size());
    segment_.clear();
    return ciphertext_.size() >= kSpoolBufferBytes ? Drain() : Status::Ok();
  }

  Status Drain() {
    Status s = spool_->Write(ciphertext_);
    ciphertext_.clear();
    return s;
  }

  AgilePackageEncryptor* encryptor_;
  CiphertextSpool* spool_;
  std::string segment_;     // plaintext: memory only, wiped
  std::string ciphertext_;  // encrypted segments on their way to the spool
  uint32_t next_segment_ = 0;
  uint64_t plain_bytes_ = 0;
};

class AgileEncryptedWriter final : public Writer {
 public:
  AgileEncryptedWriter(ByteSink* sink, const WriterOptions& options, InnerWriterFactory make_inner)
      : sink_(sink),
        options_(options),
        make_inner_(std::move(make_inner)),
        segments_(&encryptor_, &spool_) {}

  Status Begin(const std::vector<task::Column>& columns) override {
    if (inner_ != nullptr) return Check(Internal("encrypted xlsx: Begin called twice"));
    if (options_.file_key_material == nullptr) {
      return Check(Internal("encrypted xlsx: no key material"));
    }
    auto material = ParseFileKeyMaterial(*options_.file_key_material);
    if (!material.ok()) return Check(Internal(material.status().message()));
    EC_RETURN_IF_ERROR(Check(encryptor_.Init(material->agile)));
    OPENSSL_cleanse(material->agile.package_key.data(), material->agile.package_key.size());
    EC_RETURN_IF_ERROR(Check(spool_.Open(options_.spool_directory)));
    inner_ = make_inner_(&segments_);
    return Check(inner_->Begin(columns));
  }

  Status WriteRow(const task::Row& row) override {
    EC_RETURN_IF_ERROR(status_);
    if (inner_ == nullptr) return Check(Internal("encrypted xlsx: WriteRow before Begin"));
    Status s = inner_->WriteRow(row);
    if (s.code() == StatusCode::kInvalidArgument) return s;  // a bad value: the row is skipped
    return Check(s);
  }

  StatusOr<WriteSummary> Finish() override {
    EC_RETURN_IF_ERROR(status_);
    if (inner_ == nullptr) return Check(Internal("encrypted xlsx: Finish before Begin"));
    auto summary = inner_->Finish();
    if (!summary.ok()) return Check(summary.status());
    EC_RETURN_IF_ERROR(Check(segments_.Finish()));
    EC_RETURN_IF_ERROR(Check(WriteCompoundFile()));
    return summary;
  }

 private:
  Status Check(Status s) {
    if (!s.ok() && status_.ok()) status_ = s;
    return s;
  }

  // The EncryptedPackage stream (size, then the spooled ciphertext) goes out
  // once, HMACed on its way; EncryptionInfo, which holds that HMAC, follows
  // it in the compound file.
  Status WriteCompoundFile() {
    StreamingHmac hmac;
    EC_RETURN_IF_ERROR(
        hmac.Init("SHA512", encryptor_.hmac_key().data(), encryptor_.hmac_key().size()));
    auto write_package = [&](ByteSink* out) -> Status {
      std::string size(8, '\0');
      for (int i = 0; i < 8; ++i) size[i] = static_cast<char>(segments_.plain_bytes() >> (8 * i));
      EC_RETURN_IF_ERROR(hmac.Update(size));
      EC_RETURN_IF_ERROR(out->Append(size));
      std::string buffer(kSpoolBufferBytes, '\0');
      return spool_.ReadAll(&buffer, [&](std::string_view chunk) -> Status {
        EC_RETURN_IF_ERROR(hmac.Update(chunk));
        return out->Append(chunk);
      });
    };
    auto encryption_info = [&]() -> StatusOr<std::string> {
      EC_ASSIGN_OR_RETURN(std::string value, hmac.Final());
      return encryptor_.EncryptionInfo(value);
    };
    return WriteEncryptedPackageFile(sink_, 8 + spool_.size(), encryptor_.EncryptionInfoSize(),
                                     write_package, encryption_info,
                                     {.sector_shift = options_.cfb_sector_shift_for_test});
  }

  ByteSink* sink_;
  WriterOptions options_;
  InnerWriterFactory make_inner_;
  AgilePackageEncryptor encryptor_;
  CiphertextSpool spool_;
  SegmentSink segments_;
  std::unique_ptr<Writer> inner_;
  Status status_;
};

// Forwards the CSV's bytes into the open zip entry.
class EntrySink final : public ByteSink {
 public:
  explicit EntrySink(ZipStreamWriter* zip) : zip_(zip) {}
  Status Append(std::string_view bytes) override { return zip_->Write(bytes); }

 private:
  ZipStreamWriter* zip_;
};

std::vector<ZipEntryKey> ZipKeysOf(const WriterOptions& options, Status* status) {
  if (options.file_key_material == nullptr) {
    *status = Internal("encrypted zip: no key material");
    return {};
  }
  auto material = ParseFileKeyMaterial(*options.file_key_material);
  if (!material.ok()) {
    *status = Internal(material.status().message());
    return {};
  }
  return std::move(material->zip_keys);
}

class AesZipCsvWriter final : public Writer {
 public:
  AesZipCsvWriter(ByteSink* sink, const WriterOptions& options)
      : options_(options),
        keys_(ZipKeysOf(options, &status_)),
        zip_(sink, ZipOptions{.deflate_level = options.deflate_level, .aes_entry_keys = &keys_}),
        entry_sink_(&zip_) {
    options_.csv_gzip = false;  // the zip compresses
    if (options_.split_file_stem.empty()) options_.split_file_stem = "export";
  }
  ~AesZipCsvWriter() override {
    for (ZipEntryKey& k : keys_) {
      OPENSSL_cleanse(k.aes_key.data(), k.aes_key.size());
      OPENSSL_cleanse(k.hmac_key.data(), k.hmac_key.size());
    }
  }

  Status Begin(const std::vector<task::Column>& columns) override {
    EC_RETURN_IF_ERROR(status_);
    if (inner_ != nullptr) return Check(Internal("encrypted csv: Begin called twice"));
    EC_RETURN_IF_ERROR(Check(zip_.BeginEntry(options_.split_file_stem + ".csv")));
    inner_ = NewCsvWriter(&entry_sink_, options_);
    return Check(inner_->Begin(columns));
  }

  Status WriteRow(const task::Row& row) override {
    EC_RETURN_IF_ERROR(status_);
    if (inner_ == nullptr) return Check(Internal("encrypted csv: WriteRow before Begin"));
    Status s = inner_->WriteRow(row);
    if (s.code() == StatusCode::kInvalidArgument) return s;  // a bad value: the row is skipped
    return Check(s);
  }

  StatusOr<WriteSummary> Finish() override {
    EC_RETURN_IF_ERROR(status_);
    if (inner_ == nullptr) return Check(Internal("encrypted csv: Finish before Begin"));
    auto summary = inner_->Finish();
    if (!summary.ok()) return Check(summary.status());
    EC_RETURN_IF_ERROR(Check(zip_.EndEntry()));
    EC_RETURN_IF_ERROR(Check(zip_.Finish()));
    return summary;
  }

 private:
  Status Check(Status s) {
    if (!s.ok() && status_.ok()) status_ = s;
    return s;
  }

  Status status_;
  WriterOptions options_;
  std::vector<ZipEntryKey> keys_;
  ZipStreamWriter zip_;
  EntrySink entry_sink_;
  std::unique_ptr<Writer> inner_;
};

}  // namespace

std::unique_ptr<Writer> NewAgileEncryptedWriter(ByteSink* sink, const WriterOptions& options,
                                                InnerWriterFactory make_inner) {
  return std::make_unique<AgileEncryptedWriter>(sink, options, std::move(make_inner));
}

std::unique_ptr<Writer> NewAesZipCsvWriter(ByteSink* sink, const WriterOptions& options) {
  return std::make_unique<AesZipCsvWriter>(sink, options);
}

}  // namespace export_center::render::encryption
