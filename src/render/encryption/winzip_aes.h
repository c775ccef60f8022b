#pragma once
// One WinZip AES entry (AE-2, AES-256; the "AES Encryption Information"
// note WinZip publishes): the entry data is the salt, the 2-byte password
// verifier, the compressed bytes in AES-CTR with a little-endian counter
// starting at 1, and 10 bytes of HMAC-SHA1 over that ciphertext. AE-2 stores
// no CRC (the HMAC authenticates instead), so nothing about the plaintext
// shows.
//
// Written by the project's own zip_stream.h rather than libzip: libzip
// (zip_file_set_encryption, ZIP_EM_AES_256) takes the password and derives
// each entry's keys itself, and an attempt no longer has the password — only
// the entry keys DeriveFileKeyMaterial derived at create. libzip would also
// need a seekable output for its central directory and data descriptors.

#include <openssl/evp.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "render/encryption/file_key_material.h"
#include "render/encryption/openssl_util.h"

namespace export_center::render::encryption {

inline constexpr size_t kWinZipAesHeaderBytes = 16 + 2;  // salt, verifier
inline constexpr size_t kWinZipAesAuthBytes = 10;

class WinZipAesEncryptor {
 public:
  WinZipAesEncryptor();
  ~WinZipAesEncryptor();
  WinZipAesEncryptor(const WinZipAesEncryptor&) = delete;
  WinZipAesEncryptor& operator=(const WinZipAesEncryptor&) = delete;

  // Starts an entry under `key`; returns the bytes that open its data (salt
  // and verifier). REQUIRES: a key no other entry of any file used.
  StatusOr<std::string> Start(const ZipEntryKey& key);
  // Encrypts `plain` and appends the ciphertext to `out`.
  Status Encrypt(std::string_view plain, std::string* out);
  // The authentication code that closes the entry's data.
  StatusOr<std::string> Finish();

 private:
  Status Refill();

  EVP_CIPHER_CTX* ecb_;
  StreamingHmac hmac_;
  uint64_t counter_ = 1;
  std::string keystream_;
  size_t used_ = 0;
};

}  // namespace export_center::render::encryption
