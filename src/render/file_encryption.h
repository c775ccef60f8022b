#pragma once
// Password-protected files (issue 49): what a writer needs to encrypt a file,
// derived once from the requester's password at create. The password itself
// is never kept: the key material below is what api/ stores (wrapped under the
// configured key-encryption key) so every attempt of the task writes a file
// the same password opens. Formats: XLSX in ECMA-376 Agile Encryption, CSV and
// split parts in an AES-256 (WinZip AE-2) zip — docs/xlsx.md#encrypted-files.

#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center::render {

// Derives the secret key material (opaque bytes, bounded size) that
// WriterOptions::file_key_material carries. InvalidArgument when the password
// is empty or not valid UTF-8. Costly by design (the password hash's spins):
// call it once per task, at create.
StatusOr<std::string> DeriveFileKeyMaterial(std::string_view password);

}  // namespace export_center::render
