#include "render/encryption/compound_file.h"

#include <array>
#include <string_view>
#include <utility>
#include <vector>

namespace export_center::render::encryption {
namespace {

constexpr uint32_t kFreeSect = 0xFFFFFFFF;
constexpr uint32_t kEndOfChain = 0xFFFFFFFE;
constexpr uint32_t kFatSect = 0xFFFFFFFD;
constexpr uint32_t kDifSect = 0xFFFFFFFC;
constexpr uint32_t kNoStream = 0xFFFFFFFF;
constexpr uint64_t kMiniStreamCutoff = 4096;
constexpr uint64_t kMiniSector = 64;
constexpr size_t kHeaderDifat = 109;
constexpr uint64_t kVersion3MaxStream = 0x80000000;  // MS-CFB 2.6.3
constexpr size_t kFlushBytes = 64 * 1024;

void Put16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xFF));
  out->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* out, uint32_t v) {
  Put16(out, static_cast<uint16_t>(v & 0xFFFF));
  Put16(out, static_cast<uint16_t>(v >> 16));
}
void Put64(std::string* out, uint64_t v) {
  Put32(out, static_cast<uint32_t>(v));
  Put32(out, static_cast<uint32_t>(v >> 32));
}

// UNICODE-LP-P4 (MS-OFFCRYPTO 2.1.2): byte length, UTF-16LE, padded to 4.
void PutUnicodeLpP4(std::string* out, std::string_view ascii) {
  Put32(out, static_cast<uint32_t>(ascii.size() * 2));
  for (char c : ascii) Put16(out, static_cast<uint8_t>(c));
  if (ascii.size() % 2 == 1) Put16(out, 0);
}

// \x06DataSpaces/Version (2.1.5 DataSpaceVersionInfo).
std::string VersionStream() {
  std::string s;
  PutUnicodeLpP4(&s, "Microsoft.Container.DataSpaces");
  for (int i = 0; i < 3; ++i) Put32(&s, 1);  // reader, updater, writer: 1.0
  return s;
}

// \x06DataSpaces/DataSpaceMap (2.1.6): EncryptedPackage → StrongEncryptionDataSpace.
std::string DataSpaceMapStream() {
  std::string entry;
  Put32(&entry, 1);  // reference components
  Put32(&entry, 0);  // a stream
  PutUnicodeLpP4(&entry, "EncryptedPackage");
  PutUnicodeLpP4(&entry, "StrongEncryptionDataSpace");
  std::string s;
  Put32(&s, 8);  // header length
  Put32(&s, 1);  // entries
  Put32(&s, static_cast<uint32_t>(entry.size() + 4));
  return s + entry;
}

// \x06DataSpaces/DataSpaceInfo/StrongEncryptionDataSpace (2.1.7).
std::string DataSpaceDefinitionStream() {
  std::string s;
  Put32(&s, 8);
  Put32(&s, 1);
  PutUnicodeLpP4(&s, "StrongEncryptionTransform");
  return s;
}

// \x06DataSpaces/TransformInfo/StrongEncryptionTransform/\x06Primary
// (2.1.8 TransformInfoHeader + 2.1.9 EncryptionTransformInfo).
std::string PrimaryStream() {
  constexpr std::string_view kId = "{FF9A3F03-56EF-4613-BDD5-5A41C1D07246}";
  std::string s;
  Put32(&s, static_cast<uint32_t>(12 + kId.size() * 2));  // transform length
  Put32(&s, 1);                                           // transform type
  PutUnicodeLpP4(&s, kId);
  PutUnicodeLpP4(&s, "Microsoft.Container.EncryptionTransform");
  for (int i = 0; i < 3; ++i) Put32(&s, 1);  // versions 1.0
  Put32(&s, 0);                              // encryption name: empty
  Put32(&s, 0);                              // block size
  Put32(&s, 0);                              // cipher mode
  Put32(&s, 4);                              // reserved
  return s;
}

enum Type : uint8_t { kStorage = 1, kStream = 2, kRoot = 5 };
enum Color : uint8_t { kRed = 0, kBlack = 1 };

// The directory, in the order (and red-black tree) herumi/msoffice and
// msoffcrypto-tool write, which Office opens. Indexes are fixed.
enum Index : uint32_t {
  kRootIndex,
  kPackageIndex,
  kDataSpacesIndex,
  kVersionIndex,
  kMapIndex,
  kInfoIndex,
  kDefinitionIndex,
  kTransformInfoIndex,
  kTransformIndex,
  kPrimaryIndex,
  kEncryptionInfoIndex,
  kEntryCount
};

struct DirEntry {
  std::string_view name;  // ASCII; \x06 is a character of the name
  Type type = kStream;
  Color color = kBlack;
  uint32_t left = kNoStream;
  uint32_t right = kNoStream;
  uint32_t child = kNoStream;
  uint32_t start = kEndOfChain;
  uint64_t size = 0;
};

std::array<DirEntry, kEntryCount> Directory() {
  std::array<DirEntry, kEntryCount> d;
  d[kRootIndex] = {"Root Entry", kRoot, kRed, kNoStream, kNoStream, kEncryptionInfoIndex};
  d[kPackageIndex] = {"EncryptedPackage", kStream, kRed};
  d[kDataSpacesIndex] = {
      "\x06"
      "DataSpaces",
      kStorage,
      kRed,
      kNoStream,
      kNoStream,
      kMapIndex};
  d[kVersionIndex] = {"Version", kStream, kBlack};
  d[kMapIndex] = {"DataSpaceMap", kStream, kBlack, kVersionIndex, kInfoIndex};
  d[kInfoIndex] = {"DataSpaceInfo",     kStorage,        kBlack, kNoStream,
                   kTransformInfoIndex, kDefinitionIndex};
  d[kDefinitionIndex] = {"StrongEncryptionDataSpace", kStream, kBlack};
  d[kTransformInfoIndex] = {"TransformInfo", kStorage, kRed, kNoStream, kNoStream, kTransformIndex};
  d[kTransformIndex] = {
      "StrongEncryptionTransform", kStorage, kBlack, kNoStream, kNoStream, kPrimaryIndex};
  d[kPrimaryIndex] = {
      "\x06"
      "Primary",
      kStream, kBlack};
  d[kEncryptionInfoIndex] = {"EncryptionInfo", kStream, kBlack, kDataSpacesIndex, kPackageIndex};
  return d;
}

void PutDirEntry(std::string* out, const DirEntry& e) {
  std::string name;
  for (char c : e.name) Put16(&name, static_cast<uint8_t>(c));
  const size_t name_bytes = e.name.empty() ? 0 : name.size() + 2;  // with the terminator
  name.resize(64, '\0');
  out->append(name);
  Put16(out, static_cast<uint16_t>(name_bytes));
  out->push_back(static_cast<char>(e.type));
  out->push_back(static_cast<char>(e.color));
  Put32(out, e.left);
  Put32(out, e.right);
  Put32(out, e.child);
  out->append(16, '\0');  // CLSID
  Put32(out, 0);          // state bits
  Put64(out, 0);          // creation time: none (MS-CFB allows all zeros)
  Put64(out, 0);          // modification time
  Put32(out, e.start);
  Put64(out, e.size);
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Buffers the small tables and checks the package callback's byte count.
class Out final : public ByteSink {
 public:
  explicit Out(ByteSink* sink) : sink_(sink) {}
  Status Append(std::string_view bytes) override {
    written_ += bytes.size();
    buf_.append(bytes);
    return buf_.size() >= kFlushBytes ? Flush() : Status::Ok();
  }
  Status Flush() {
    if (buf_.empty()) return Status::Ok();
    Status s = sink_->Append(buf_);
    buf_.clear();
    return s;
  }
  uint64_t written() const { return written_; }
  Status PadTo(uint64_t multiple) {
    const uint64_t rem = written_ % multiple;
    return rem == 0 ? Status::Ok() : Append(std::string(multiple - rem, '\0'));
  }

 private:
  ByteSink* sink_;
  std::string buf_;
  uint64_t written_ = 0;
};

class StringSink final : public ByteSink {
 public:
  Status Append(std::string_view bytes) override {
    if (bytes_.size() + bytes.size() >= kMiniStreamCutoff) return Internal("cfb: package too long");
    bytes_.append(bytes);
    return Status::Ok();
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace

Status WriteEncryptedPackageFile(ByteSink* sink, uint64_t package_size, size_t encryption_info_size,
                                 const std::function<Status(ByteSink*)>& write_package,
                                 const std::function<StatusOr<std::string>()>& encryption_info,
                                 const CompoundFileOptions& options) {
  const int shift = options.sector_shift != 0 ? options.sector_shift
                                              : (package_size <= kVersion3MaxStream ? 9 : 12);
  if (shift != 9 && shift != 12) return Internal("cfb: sector shift must be 9 or 12");
  if (encryption_info_size >= kMiniStreamCutoff) return Internal("cfb: EncryptionInfo too long");
  const uint64_t sector = uint64_t{1} << shift;
  const uint64_t per_fat = sector / 4;
  const bool big_package = package_size >= kMiniStreamCutoff;

  // The small streams, in the mini stream in this order.
  std::vector<std::pair<Index, std::string>> small;
  small.emplace_back(kVersionIndex, VersionStream());
  small.emplace_back(kMapIndex, DataSpaceMapStream());
  small.emplace_back(kDefinitionIndex, DataSpaceDefinitionStream());
  small.emplace_back(kPrimaryIndex, PrimaryStream());
  const size_t info_slot = small.size();
  small.emplace_back(kEncryptionInfoIndex, std::string());  // known after the package
  const size_t package_slot = small.size();
  if (!big_package) small.emplace_back(kPackageIndex, std::string());

  auto dir = Directory();
  std::vector<uint64_t> mini_sizes;  // per small stream, in bytes
  for (size_t i = 0; i < small.size(); ++i) {
    const uint64_t size = i == info_slot      ? encryption_info_size
                          : i == package_slot ? package_size
                                              : small[i].second.size();
    mini_sizes.push_back(size);
  }
  uint64_t mini_count = 0;
  for (size_t i = 0; i < small.size(); ++i) {
    dir[small[i].first].start = static_cast<uint32_t>(mini_count);
    dir[small[i].first].size = mini_sizes[i];
    mini_count += CeilDiv(mini_sizes[i], kMiniSector);
  }

  // Sector layout: package, mini stream, MiniFAT, directory, FAT, DIFAT.
  const uint64_t p = big_package ? CeilDiv(package_size, sector) : 0;
  const uint64_t m = CeilDiv(mini_count * kMiniSector, sector);
  const uint64_t mf = CeilDiv(mini_count * 4, sector);
  const uint64_t d = CeilDiv(uint64_t{kEntryCount} * 128, sector);
  const uint64_t base = p + m + mf + d;
  uint64_t f = 0;
  uint64_t x = 0;
  for (;;) {
    const uint64_t nf = CeilDiv(base + f + x, per_fat);
    const uint64_t nx = nf > kHeaderDifat ? CeilDiv(nf - kHeaderDifat, per_fat - 1) : 0;
    if (nf == f && nx == x) break;
    f = nf;
    x = nx;
  }
  const uint64_t total = base + f + x;
  if (total >= 0xFFFFFFFAull) return LimitExceeded("cfb: file too large");
  const uint64_t mini_at = p;
  const uint64_t minifat_at = p + m;
  const uint64_t dir_at = minifat_at + mf;
  const uint64_t fat_at = dir_at + d;
  const uint64_t difat_at = fat_at + f;

  dir[kRootIndex].start = m > 0 ? static_cast<uint32_t>(mini_at) : kEndOfChain;
  dir[kRootIndex].size = mini_count * kMiniSector;
  if (big_package) {
    dir[kPackageIndex].start = 0;
    dir[kPackageIndex].size = package_size;
  }

  Out out(sink);
  // Header (MS-CFB 2.2), padded to a whole sector for version 4.
  std::string h("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8);
  h.append(16, '\0');                       // CLSID
  Put16(&h, 0x003E);                        // minor version
  Put16(&h, shift == 9 ? 3 : 4);            // major version
  Put16(&h, 0xFFFE);                        // little-endian
  Put16(&h, static_cast<uint16_t>(shift));  // sector shift
  Put16(&h, 6);                             // mini sector shift
  h.append(6, '\0');
  Put32(&h, shift == 9 ? 0 : static_cast<uint32_t>(d));  // directory sectors (v4 only)
  Put32(&h, static_cast<uint32_t>(f));
  Put32(&h, static_cast<uint32_t>(dir_at));
  Put32(&h, 0);  // transaction signature
  Put32(&h, static_cast<uint32_t>(kMiniStreamCutoff));
  Put32(&h, mf > 0 ? static_cast<uint32_t>(minifat_at) : kEndOfChain);
  Put32(&h, static_cast<uint32_t>(mf));
  Put32(&h, x > 0 ? static_cast<uint32_t>(difat_at) : kEndOfChain);
  Put32(&h, static_cast<uint32_t>(x));
  for (uint64_t i = 0; i < kHeaderDifat; ++i) {
    Put32(&h, i < f ? static_cast<uint32_t>(fat_at + i) : kFreeSect);
  }
  h.resize(sector, '\0');
  EC_RETURN_IF_ERROR(out.Append(h));

  // The package: straight through when big, else into the mini stream.
  if (big_package) {
    const uint64_t before = out.written();
    EC_RETURN_IF_ERROR(out.Flush());
    EC_RETURN_IF_ERROR(write_package(&out));
    if (out.written() - before != package_size) return Internal("cfb: package size mismatch");
    EC_RETURN_IF_ERROR(out.PadTo(sector));
  } else {
    StringSink small_package;
    EC_RETURN_IF_ERROR(write_package(&small_package));
    if (small_package.bytes().size() != package_size) {
      return Internal("cfb: package size mismatch");
    }
    small[package_slot].second = std::move(small_package.bytes());
  }
  EC_ASSIGN_OR_RETURN(small[info_slot].second, encryption_info());
  if (small[info_slot].second.size() != encryption_info_size) {
    return Internal("cfb: EncryptionInfo size mismatch");
  }

  // The mini stream, the MiniFAT.
  for (const auto& [index, bytes] : small) {
    EC_RETURN_IF_ERROR(out.Append(bytes));
    EC_RETURN_IF_ERROR(out.PadTo(kMiniSector));
  }
  EC_RETURN_IF_ERROR(out.PadTo(sector));
  std::string t;
  for (size_t i = 0; i < small.size(); ++i) {
    const uint64_t first = dir[small[i].first].start;
    const uint64_t n = CeilDiv(mini_sizes[i], kMiniSector);
    for (uint64_t k = 0; k < n; ++k) {
      Put32(&t, k + 1 < n ? static_cast<uint32_t>(first + k + 1) : kEndOfChain);
    }
  }
  while (t.size() % sector != 0) Put32(&t, kFreeSect);
  EC_RETURN_IF_ERROR(out.Append(t));

  // The directory, padded with unused entries.
  t.clear();
  for (const DirEntry& e : dir) PutDirEntry(&t, e);
  while (t.size() % sector != 0) PutDirEntry(&t, DirEntry{"", Type{0}, kRed});
  EC_RETURN_IF_ERROR(out.Append(t));

  // The FAT: each region a chain of consecutive sectors.
  auto next = [&](uint64_t s) -> uint32_t {
    auto chain = [s](uint64_t from, uint64_t count) {
      return s + 1 < from + count ? static_cast<uint32_t>(s + 1) : kEndOfChain;
    };
    if (s < p) return chain(0, p);
    if (s < minifat_at) return chain(mini_at, m);
    if (s < dir_at) return chain(minifat_at, mf);
    if (s < fat_at) return chain(dir_at, d);
    if (s < difat_at) return kFatSect;
    if (s < total) return kDifSect;
    return kFreeSect;
  };
  for (uint64_t fat_sector = 0; fat_sector < f; ++fat_sector) {
    t.clear();
    for (uint64_t k = 0; k < per_fat; ++k) Put32(&t, next(fat_sector * per_fat + k));
    EC_RETURN_IF_ERROR(out.Append(t));
  }

  // DIFAT sectors: the FAT sectors past the header's 109, chained.
  for (uint64_t j = 0; j < x; ++j) {
    t.clear();
    for (uint64_t k = 0; k < per_fat - 1; ++k) {
      const uint64_t fat_index = kHeaderDifat + j * (per_fat - 1) + k;
      Put32(&t, fat_index < f ? static_cast<uint32_t>(fat_at + fat_index) : kFreeSect);
    }
    Put32(&t, j + 1 < x ? static_cast<uint32_t>(difat_at + j + 1) : kEndOfChain);
    EC_RETURN_IF_ERROR(out.Append(t));
  }
  return out.Flush();
}

}  // namespace export_center::render::encryption
