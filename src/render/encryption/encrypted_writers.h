#pragma once
// The writers of password-protected files (render/file_encryption.h), each a
// wrapper around a plain writer: render::NewWriter (writer.h) picks them when
// WriterOptions::file_key_material is set. docs/xlsx.md#encrypted-files.
//
// - XLSX (plain or template): the workbook's bytes are encrypted in 4 096-byte
//   segments the moment the inner writer produces them (Agile Encryption,
//   agile_package.h); only ciphertext is spooled, to an unlinked temporary
//   file in WriterOptions::spool_directory. Finish reads the spool once more,
//   HMACs it and writes the compound file (compound_file.h) into the sink.
//   Why a spool: the EncryptedPackage stream starts with the package size and
//   the compound file's header and tables come before it, while the sink is
//   append-only (an S3 multipart upload) — the ciphertext is the only thing
//   whose size is unknown until the end, and it is safe to rest on disk.
// - CSV: a .zip holding one WinZip AES (AE-2) entry, `<split_file_stem>.csv`,
//   streamed straight to the sink (zip_stream.h); nothing is spooled.
//
// Memory: the inner writer's, plus a segment and a 256 KiB spool buffer.
// A material that does not parse fails Begin with Internal.

#include <functional>
#include <memory>

#include "common/byte_sink.h"
#include "render/writer.h"

namespace export_center::render::encryption {

using InnerWriterFactory = std::function<std::unique_ptr<Writer>(ByteSink*)>;

// `sink` is not owned and must outlive the writer.
std::unique_ptr<Writer> NewAgileEncryptedWriter(ByteSink* sink, const WriterOptions& options,
                                                InnerWriterFactory make_inner);
std::unique_ptr<Writer> NewAesZipCsvWriter(ByteSink* sink, const WriterOptions& options);

}  // namespace export_center::render::encryption
