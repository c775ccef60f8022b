#pragma once
// The compound file (MS-CFB) an encrypted OOXML package lives in
// (MS-OFFCRYPTO 2.3.4.x): the streams EncryptionInfo and EncryptedPackage and
// the \x06DataSpaces storage Office reads to learn the package is encrypted.
//
// Written by hand, in one forward pass into an append-only ByteSink. libgsf
// (Debian libgsf-1), the well-kept library for this, does not fit — read in
// its gsf-outfile-msole.c: gsf_outfile_msole_close_root writes the tables
// last and then seeks back to offset 0x2C and 0x3C to fix up the header, so
// its output must be seekable (an S3 multipart upload is not: it would need a
// second temporary copy of the whole file), it records a stream's size as a
// guint32 (no stream of 4 GiB), and it holds a stream below the 4 096-byte
// cut-off in memory until it grows past it. Here every table is a function
// of two sizes known before the first byte goes out (the package stream's
// and EncryptionInfo's, whose XML has a fixed length), so the header, the
// package, the mini stream, the MiniFAT, the directory, the FAT and the DIFAT
// leave in that order, and memory is one sector's worth of tables at a time.
//
// Sectors of 512 bytes (version 3, what Office writes) while the package
// stream fits version 3's 2 GiB stream bound, else 4 096 (version 4).

#include <cstdint>
#include <functional>
#include <string>

#include "common/byte_sink.h"
#include "common/status.h"

namespace export_center::render::encryption {

struct CompoundFileOptions {
  int sector_shift = 0;  // 9 or 12; 0 picks by the package size (tests force 12)
};

// Writes the compound file into `sink`. `write_package` is called once and
// must append exactly `package_size` bytes (the EncryptedPackage stream: its
// 8-byte size and the ciphertext) to the sink it is given; `encryption_info`
// is called after it and must return exactly `encryption_info_size` bytes
// (the HMAC over the package stream goes in there). Errors of the sink or of
// the callbacks are returned; a size mismatch is Internal.
Status WriteEncryptedPackageFile(ByteSink* sink, uint64_t package_size, size_t encryption_info_size,
                                 const std::function<Status(ByteSink*)>& write_package,
                                 const std::function<StatusOr<std::string>()>& encryption_info,
                                 const CompoundFileOptions& options = {});

}  // namespace export_center::render::encryption
