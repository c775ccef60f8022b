#pragma once
// ZipStreamWriter: writes a ZIP archive straight into a ByteSink, in one pass.
//
// Hand-written on purpose rather than taken from a ZIP library: an XLSX sheet
// is streamed row by row into a deflating entry, the bytes leave for the sink
// (and its size cap) as soon as zlib emits them, and the export stops the
// moment the cap is crossed. No temp file, no seeking back, and memory bounded
// by one zlib stream plus a fixed output buffer whatever the entry size.
//
// Format (APPNOTE 6.3.x): an entry is deflated (method 8) or stored (0) with
// general purpose bit 3, so its CRC and sizes follow the data in a data descriptor.
// ZIP64 records are used only when needed: an entry over 4 GiB gets a 64-bit
// data descriptor and a ZIP64 extra field in the central directory, an offset
// over 4 GiB a ZIP64 offset, and more than 65 534 entries or a directory past
// 4 GiB the ZIP64 end records. (Like Go's archive/zip; readers take sizes from
// the central directory.) Not thread-safe.
//
// With ZipOptions::aes_entry_keys every entry is encrypted as WinZip AES
// (AE-2, AES-256; render/encryption/winzip_aes.h): method 99 with the 0x9901
// extra field naming the real method, CRC 0, the data framed by salt,
// verifier and authentication code. Entry i uses key i, so no two entries
// share an AES-CTR key stream; one entry more than there are keys is
// LimitExceeded.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_sink.h"
#include "common/status.h"
#include "render/encryption/file_key_material.h"

namespace export_center::render {

struct ZipOptions {
  int deflate_level = 1;  // zlib 0..9
  // Size of the buffer compressed bytes collect in before going to the sink.
  size_t output_buffer_bytes = 128 * 1024;
  // Bytes already in the sink before the archive starts (a prefix); offsets in
  // the archive are absolute. Lets a test reach 4 GiB offsets with a sparse file.
  uint64_t start_offset = 0;
  // Not owned; must outlive the writer. nullptr writes plain entries.
  const std::vector<encryption::ZipEntryKey>* aes_entry_keys = nullptr;
};

enum class ZipMethod { kDeflate, kStored };

class ZipStreamWriter {
 public:
  // `sink` is not owned and must outlive the writer.
  ZipStreamWriter(ByteSink* sink, const ZipOptions& options);
  ~ZipStreamWriter();
  ZipStreamWriter(const ZipStreamWriter&) = delete;
  ZipStreamWriter& operator=(const ZipStreamWriter&) = delete;

  // Starts an entry (closing none: REQUIRES no entry open). `name` is a
  // relative path with '/' separators. kStored passes bytes through
  // uncompressed (for data that is compressed already, like an .xlsx).
  Status BeginEntry(std::string_view name, ZipMethod method = ZipMethod::kDeflate);
  // Appends uncompressed bytes to the open entry.
  Status Write(std::string_view data);
  // Flushes the deflate stream and writes the data descriptor.
  Status EndEntry();
  // Adds a whole entry whose compressed bytes are already known, e.g. copied
  // unchanged from a template (method 0 or 8, CRC and size from its central
  // directory). REQUIRES no entry open; entries below 4 GiB only.
  Status AddRawEntry(std::string_view name, uint16_t method, uint32_t crc,
                     uint64_t uncompressed_size, std::string_view compressed);
  // Writes the central directory and end records. REQUIRES no entry open.
  Status Finish();

  // Bytes handed to the sink so far (excluding start_offset).
  uint64_t bytes_written() const { return offset_ - options_.start_offset; }

 private:
  struct Entry {
    std::string name;
    uint32_t crc = 0;
    uint64_t compressed = 0;
    uint64_t uncompressed = 0;
    uint64_t offset = 0;
    uint16_t method = 8;
    uint16_t flags = 0;
    uint16_t aes_method = 0;  // the real method of a WinZip AES entry (method 99)
  };
  class Deflater;
  class Encryptor;

  // An entry's data, through the AES encryptor when the archive has keys.
  Status EmitEntryData(std::string_view bytes);

  Status Emit(std::string_view bytes);  // to the sink, tracking the offset
  Status Fail(Status status);           // makes the failure sticky
  Status WriteCentralDirectory();
  Status WriteEndRecords(uint64_t cd_offset, uint64_t cd_size);

  ByteSink* sink_;
  ZipOptions options_;
  std::unique_ptr<Deflater> deflater_;
  std::unique_ptr<Encryptor> encryptor_;  // with aes_entry_keys
  std::vector<Entry> entries_;
  bool entry_open_ = false;
  bool finished_ = false;
  Status status_;
  uint64_t offset_;
};

}  // namespace export_center::render
