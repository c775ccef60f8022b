#include "render/zip_stream.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "render/encryption/winzip_aes.h"

namespace export_center::render {
namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kDataDescriptorSig = 0x08074b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint16_t kFlagDataDescriptor = 0x0008;
constexpr uint16_t kFlagUtf8 = 0x0800;
constexpr uint16_t kFlagEncrypted = 0x0001;
constexpr uint16_t kMethodWinZipAes = 99;
constexpr uint16_t kVersion51 = 51;  // AES encryption (WinZip AE-x)
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kVersion20 = 20;  // deflate
constexpr uint16_t kVersion45 = 45;  // ZIP64
constexpr uint16_t kMadeByUnix = 3 << 8;
// 1980-01-01 00:00:00, the DOS epoch: a fixed stamp keeps output reproducible,
// and the storage layer, not the archive, records when a file was made.
constexpr uint16_t kDosTime = 0;
constexpr uint16_t kDosDate = (1 << 5) | 1;
constexpr uint32_t kMax32 = 0xFFFFFFFFu;
constexpr uint16_t kMax16 = 0xFFFF;
// zlib takes 32-bit lengths; larger writes go in slices.
constexpr size_t kMaxSlice = 1u << 30;

void Put16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xFF));
  out->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* out, uint32_t v) {
  Put16(out, static_cast<uint16_t>(v & 0xFFFF));
  Put16(out, static_cast<uint16_t>(v >> 16));
}
void Put64(std::string* out, uint64_t v) {
  Put32(out, static_cast<uint32_t>(v & kMax32));
  Put32(out, static_cast<uint32_t>(v >> 32));
}

// The 0x9901 extra field of a WinZip AES entry: AE-2, "AE", AES-256, and
// the real compression method.
std::string AesExtra(uint16_t method) {
  std::string e;
  Put16(&e, 0x9901);
  Put16(&e, 7);
  Put16(&e, 2);  // AE-2: no CRC
  e.append("AE");
  e.push_back(3);  // AES-256
  Put16(&e, method);
  return e;
}

}  // namespace

// Encrypts entry data on its way to the sink (WinZip AE-2).
class ZipStreamWriter::Encryptor {
 public:
  encryption::WinZipAesEncryptor aes;
  std::string scratch;
};

// One raw deflate stream (windowBits -15, no zlib/gzip wrapper: ZIP keeps its
// own CRC) reused across entries, with a fixed output buffer.
class ZipStreamWriter::Deflater {
 public:
  Deflater(ZipStreamWriter* owner, int level, size_t buffer_bytes)
      : owner_(owner), out_(std::max<size_t>(buffer_bytes, 4096), '\0') {
    ok_ =
        deflateInit2(&z_, std::clamp(level, 0, 9), Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~Deflater() {
    if (ok_) deflateEnd(&z_);
  }

  // `stored`: the entry's bytes pass through uncompressed (method 0).
  Status Start(bool stored) {
    if (!ok_) return Internal("zlib deflateInit2 failed");
    if (deflateReset(&z_) != Z_OK) return Internal("zlib deflateReset failed");
    crc_ = crc32_z(0, nullptr, 0);
    compressed_ = uncompressed_ = 0;
    stored_ = stored;
    return Status::Ok();
  }

  Status Write(std::string_view data) {
    crc_ = crc32_z(crc_, reinterpret_cast<const Bytef*>(data.data()), data.size());
    uncompressed_ += data.size();
    if (stored_) {
      compressed_ += data.size();
      return owner_->EmitEntryData(data);
    }
    while (!data.empty()) {
      const size_t n = std::min(data.size(), kMaxSlice);
      EC_RETURN_IF_ERROR(Run(data.substr(0, n), Z_NO_FLUSH));
      data.remove_prefix(n);
    }
    return Status::Ok();
  }

  Status End() { return stored_ ? Status::Ok() : Run({}, Z_FINISH); }

  uint32_t crc() const { return static_cast<uint32_t>(crc_); }
  uint64_t compressed() const { return compressed_; }
  uint64_t uncompressed() const { return uncompressed_; }

 private:
  // Feeds `in` and drains the output buffer to the sink whenever it fills.
  Status Run(std::string_view in, int flush) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    for (;;) {
      z_.next_out = reinterpret_cast<Bytef*>(out_.data() + used_);
      z_.avail_out = static_cast<uInt>(out_.size() - used_);
      const int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return Internal("zlib deflate failed");
      used_ = out_.size() - z_.avail_out;
      const bool full = z_.avail_out == 0;
      const bool done = flush == Z_FINISH ? rc == Z_STREAM_END : (z_.avail_in == 0 && !full);
      if (full || (done && flush == Z_FINISH)) EC_RETURN_IF_ERROR(Drain());
      if (done) return Status::Ok();
    }
  }

  Status Drain() {
    if (used_ == 0) return Status::Ok();
    compressed_ += used_;
    const size_t n = used_;
    used_ = 0;
    return owner_->EmitEntryData(std::string_view(out_.data(), n));
  }

  ZipStreamWriter* owner_;
  z_stream z_{};
  bool ok_ = false;
  std::string out_;
  size_t used_ = 0;
  uLong crc_ = 0;
  bool stored_ = false;
  uint64_t compressed_ = 0;
  uint64_t uncompressed_ = 0;
};

ZipStreamWriter::ZipStreamWriter(ByteSink* sink, const ZipOptions& options)
    : sink_(sink),
      options_(options),
      deflater_(
          std::make_unique<Deflater>(this, options.deflate_level, options.output_buffer_bytes)),
      offset_(options.start_offset) {
  if (options_.aes_entry_keys != nullptr) encryptor_ = std::make_unique<Encryptor>();
}

ZipStreamWriter::~ZipStreamWriter() = default;

Status ZipStreamWriter::Emit(std::string_view bytes) {
  Status s = sink_->Append(bytes);
  if (!s.ok()) return Fail(std::move(s));
  offset_ += bytes.size();
  return Status::Ok();
}

Status ZipStreamWriter::EmitEntryData(std::string_view bytes) {
  if (encryptor_ == nullptr) return Emit(bytes);
  encryptor_->scratch.clear();
  Status s = encryptor_->aes.Encrypt(bytes, &encryptor_->scratch);
  if (!s.ok()) return Fail(std::move(s));
  return Emit(encryptor_->scratch);
}

Status ZipStreamWriter::Fail(Status status) {
  if (status_.ok()) status_ = status;
  return status;
}

Status ZipStreamWriter::BeginEntry(std::string_view name, ZipMethod method) {
  EC_RETURN_IF_ERROR(status_);
  if (entry_open_ || finished_) return Fail(Internal("zip: BeginEntry out of order"));
  if (name.empty() || name.size() > kMax16) return Fail(Internal("zip: bad entry name"));
  const uint16_t code = method == ZipMethod::kStored ? kMethodStored : kMethodDeflate;
  const bool aes = encryptor_ != nullptr;
  const encryption::ZipEntryKey* key = nullptr;
  if (aes) {
    if (entries_.size() >= options_.aes_entry_keys->size()) {
      return Fail(LimitExceeded("zip: an encrypted archive holds at most " +
                                std::to_string(options_.aes_entry_keys->size()) + " files"));
    }
    key = &(*options_.aes_entry_keys)[entries_.size()];
  }
  const uint16_t flags = kFlagDataDescriptor | kFlagUtf8 | (aes ? kFlagEncrypted : 0);
  entries_.push_back(Entry{std::string(name), 0, 0, 0, offset_, aes ? kMethodWinZipAes : code,
                           flags, aes ? code : uint16_t{0}});
  entry_open_ = true;
  const std::string extra = aes ? AesExtra(code) : std::string();
  // Sizes are unknown yet (bit 3): zero here, real values in the descriptor.
  std::string h;
  Put32(&h, kLocalHeaderSig);
  Put16(&h, aes ? kVersion51 : kVersion20);
  Put16(&h, flags);
  Put16(&h, aes ? kMethodWinZipAes : code);
  Put16(&h, kDosTime);
  Put16(&h, kDosDate);
  Put32(&h, 0);  // crc
  Put32(&h, 0);  // compressed size
  Put32(&h, 0);  // uncompressed size
  Put16(&h, static_cast<uint16_t>(name.size()));
  Put16(&h, static_cast<uint16_t>(extra.size()));
  h.append(name);
  h.append(extra);
  Status s = deflater_->Start(method == ZipMethod::kStored);
  if (!s.ok()) return Fail(std::move(s));
  if (aes) {
    auto opening = encryptor_->aes.Start(*key);  // salt and verifier open the data
    if (!opening.ok()) return Fail(opening.status());
    h.append(*opening);
  }
  return Emit(h);
}

Status ZipStreamWriter::Write(std::string_view data) {
  EC_RETURN_IF_ERROR(status_);
  if (!entry_open_) return Fail(Internal("zip: Write without an entry"));
  return deflater_->Write(data);
}

Status ZipStreamWriter::EndEntry() {
  EC_RETURN_IF_ERROR(status_);
  if (!entry_open_) return Fail(Internal("zip: EndEntry without an entry"));
  EC_RETURN_IF_ERROR(deflater_->End());
  Entry& e = entries_.back();
  e.crc = deflater_->crc();
  e.compressed = deflater_->compressed();
  e.uncompressed = deflater_->uncompressed();
  entry_open_ = false;
  if (encryptor_ != nullptr) {
    auto auth = encryptor_->aes.Finish();
    if (!auth.ok()) return Fail(auth.status());
    EC_RETURN_IF_ERROR(Emit(*auth));
    e.crc = 0;  // AE-2: the authentication code replaces the CRC
    e.compressed += encryption::kWinZipAesHeaderBytes + encryption::kWinZipAesAuthBytes;
  }
  // A 64-bit descriptor only when a size needs it (as Go's archive/zip does).
  const bool zip64 = e.compressed >= kMax32 || e.uncompressed >= kMax32;
  std::string d;
  Put32(&d, kDataDescriptorSig);
  Put32(&d, e.crc);
  if (zip64) {
    Put64(&d, e.compressed);
    Put64(&d, e.uncompressed);
  } else {
    Put32(&d, static_cast<uint32_t>(e.compressed));
    Put32(&d, static_cast<uint32_t>(e.uncompressed));
  }
  return Emit(d);
}

Status ZipStreamWriter::AddRawEntry(std::string_view name, uint16_t method, uint32_t crc,
                                    uint64_t uncompressed_size, std::string_view compressed) {
  EC_RETURN_IF_ERROR(status_);
  if (entry_open_ || finished_) return Fail(Internal("zip: AddRawEntry out of order"));
  if (encryptor_ != nullptr) return Fail(Internal("zip: a raw entry cannot be encrypted"));
  if (name.empty() || name.size() > kMax16) return Fail(Internal("zip: bad entry name"));
  // Raw entries come from templates, which are small: no ZIP64 here.
  if (uncompressed_size >= kMax32 || compressed.size() >= kMax32) {
    return Fail(InvalidArgument("zip: raw entry too large"));
  }
  entries_.push_back(Entry{std::string(name), crc, compressed.size(), uncompressed_size, offset_,
                           method, kFlagUtf8});
  // Sizes are known: they go in the local header and no descriptor follows.
  std::string h;
  Put32(&h, kLocalHeaderSig);
  Put16(&h, kVersion20);
  Put16(&h, kFlagUtf8);
  Put16(&h, method);
  Put16(&h, kDosTime);
  Put16(&h, kDosDate);
  Put32(&h, crc);
  Put32(&h, static_cast<uint32_t>(compressed.size()));
  Put32(&h, static_cast<uint32_t>(uncompressed_size));
  Put16(&h, static_cast<uint16_t>(name.size()));
  Put16(&h, 0);
  h.append(name);
  EC_RETURN_IF_ERROR(Emit(h));
  return Emit(compressed);
}

Status ZipStreamWriter::Finish() {
  EC_RETURN_IF_ERROR(status_);
  if (entry_open_ || finished_) return Fail(Internal("zip: Finish out of order"));
  const uint64_t cd_offset = offset_;
  EC_RETURN_IF_ERROR(WriteCentralDirectory());
  EC_RETURN_IF_ERROR(WriteEndRecords(cd_offset, offset_ - cd_offset));
  finished_ = true;
  return Status::Ok();
}

Status ZipStreamWriter::WriteCentralDirectory() {
  std::string h;
  for (const Entry& e : entries_) {
    h.clear();
    const bool big_u = e.uncompressed >= kMax32;
    const bool big_c = e.compressed >= kMax32;
    const bool big_o = e.offset >= kMax32;
    // ZIP64 extra: only the fields whose 32-bit slot holds 0xFFFFFFFF, in order.
    std::string extra;
    if (big_u || big_c || big_o) {
      Put16(&extra, 0x0001);
      Put16(&extra, static_cast<uint16_t>(8 * (big_u + big_c + big_o)));
      if (big_u) Put64(&extra, e.uncompressed);
      if (big_c) Put64(&extra, e.compressed);
      if (big_o) Put64(&extra, e.offset);
    }
    uint16_t version = extra.empty() ? kVersion20 : kVersion45;
    if (e.method == kMethodWinZipAes) {
      extra += AesExtra(e.aes_method);
      version = kVersion51;
    }
    Put32(&h, kCentralHeaderSig);
    Put16(&h, kMadeByUnix | std::max(kVersion45, version));
    Put16(&h, version);
    Put16(&h, e.flags);
    Put16(&h, e.method);
    Put16(&h, kDosTime);
    Put16(&h, kDosDate);
    Put32(&h, e.crc);
    Put32(&h, big_c ? kMax32 : static_cast<uint32_t>(e.compressed));
    Put32(&h, big_u ? kMax32 : static_cast<uint32_t>(e.uncompressed));
    Put16(&h, static_cast<uint16_t>(e.name.size()));
    Put16(&h, static_cast<uint16_t>(extra.size()));
    Put16(&h, 0);               // comment length
    Put16(&h, 0);               // disk number start
    Put16(&h, 0);               // internal attributes
    Put32(&h, 0100644u << 16);  // external attributes: a regular rw-r--r-- file
    Put32(&h, big_o ? kMax32 : static_cast<uint32_t>(e.offset));
    h.append(e.name);
    h.append(extra);
    EC_RETURN_IF_ERROR(Emit(h));
  }
  return Status::Ok();
}

Status ZipStreamWriter::WriteEndRecords(uint64_t cd_offset, uint64_t cd_size) {
  const uint64_t count = entries_.size();
  const bool zip64 = count >= kMax16 || cd_offset >= kMax32 || cd_size >= kMax32;
  std::string r;
  if (zip64) {
    const uint64_t zip64_end_offset = offset_;
    Put32(&r, kZip64EndSig);
    Put64(&r, 44);  // size of the rest of this record
    Put16(&r, kMadeByUnix | kVersion45);
    Put16(&r, kVersion45);
    Put32(&r, 0);  // this disk
    Put32(&r, 0);  // disk with the central directory
    Put64(&r, count);
    Put64(&r, count);
    Put64(&r, cd_size);
    Put64(&r, cd_offset);
    Put32(&r, kZip64LocatorSig);
    Put32(&r, 0);
    Put64(&r, zip64_end_offset);
    Put32(&r, 1);  // total disks
  }
  Put32(&r, kEndSig);
  Put16(&r, 0);
  Put16(&r, 0);
  Put16(&r, static_cast<uint16_t>(std::min<uint64_t>(count, kMax16)));
  Put16(&r, static_cast<uint16_t>(std::min<uint64_t>(count, kMax16)));
  Put32(&r, static_cast<uint32_t>(std::min<uint64_t>(cd_size, kMax32)));
  Put32(&r, static_cast<uint32_t>(std::min<uint64_t>(cd_offset, kMax32)));
  Put16(&r, 0);  // comment length
  return Emit(r);
}

}  // namespace export_center::render
