#pragma once
// ECMA-376 Agile Encryption of one OOXML package (MS-OFFCRYPTO 2.3.4.10-15):
// AES-256-CBC over 4 096-byte segments, each with its own IV, SHA-512, and
// the data-integrity HMAC. Built from the key material derived at create:
// the password key encryptor (fixed for the task, so every attempt's file
// opens with the same password) and the package key it wraps. What needs no
// password is fresh for every file: the keyData salt the segment IVs come
// from and the HMAC key, so two attempts never share an IV.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "render/encryption/file_key_material.h"
#include "render/encryption/openssl_util.h"

namespace export_center::render::encryption {

inline constexpr size_t kAgileSegmentBytes = 4096;

class AgilePackageEncryptor {
 public:
  AgilePackageEncryptor() = default;
  AgilePackageEncryptor(const AgilePackageEncryptor&) = delete;
  AgilePackageEncryptor& operator=(const AgilePackageEncryptor&) = delete;
  ~AgilePackageEncryptor();

  // Draws this file's keyData salt and HMAC key. Internal on an OpenSSL failure.
  Status Init(const AgilePasswordKey& key);

  // Encrypts segment `index` (kAgileSegmentBytes, or fewer for the last,
  // zero-padded to the AES block) and appends the ciphertext to `out`.
  Status EncryptSegment(uint32_t index, std::string_view plain, std::string* out);

  // The HMAC key of the data integrity check (HMAC-SHA512 over the whole
  // EncryptedPackage stream, its 8-byte size included).
  const std::array<uint8_t, kAgileHashBytes>& hmac_key() const { return hmac_key_; }

  // The EncryptionInfo stream (version 4.4, flags 0x40, the XML descriptor)
  // for the package stream's HMAC; always EncryptionInfoSize() bytes.
  StatusOr<std::string> EncryptionInfo(std::string_view hmac_value);
  size_t EncryptionInfoSize() const;

 private:
  std::string Descriptor(std::string_view encrypted_hmac_key,
                         std::string_view encrypted_hmac_value) const;
  void IvFor(const std::array<uint8_t, 8>& block_key, uint8_t* iv) const;

  AgilePasswordKey key_{};
  std::array<uint8_t, kAgileSaltBytes> key_data_salt_{};
  std::array<uint8_t, kAgileHashBytes> hmac_key_{};
  std::string encrypted_hmac_key_;
  AesCbc256 cipher_;
};

}  // namespace export_center::render::encryption
