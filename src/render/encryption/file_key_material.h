#pragma once
// The key material of a password-protected file (render/file_encryption.h),
// parsed: what DeriveFileKeyMaterial derived from the password at create,
// so an attempt can encrypt without the password.
//
// Serialized form (version 1, fixed order, no padding; 10 659 bytes at most):
//   u8  version = 1
//   Agile Encryption, the password key encryptor (MS-OFFCRYPTO 2.3.4.11):
//     salt[16] encrypted_verifier_hash_input[16] encrypted_verifier_hash_value[64]
//     encrypted_key_value[32] package_key[32]
//   u16 little-endian n (1..kMaxZipEntryKeys), then n WinZip AE-2 entry keys:
//     salt[16] aes_key[32] hmac_key[32] password_verifier[2]
// Secret: the package key and the zip keys open the file without the password.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::render::encryption {

inline constexpr uint8_t kKeyMaterialVersion = 1;
// Agile Encryption as Office 2013+ writes it: SHA-512, AES-256-CBC.
inline constexpr int kAgileSpinCount = 100000;
inline constexpr size_t kAgileSaltBytes = 16;
inline constexpr size_t kAgileKeyBytes = 32;
inline constexpr size_t kAgileHashBytes = 64;
// Every entry of an encrypted zip needs its own salt, hence its own key
// derived from the password (an AE-2 entry's AES-CTR counter always starts
// at 1): a zip holds at most this many encrypted entries.
inline constexpr size_t kMaxZipEntryKeys = 128;
inline constexpr int kZipPbkdf2Iterations = 1000;  // fixed by the AE-x format

// The password key encryptor's fields, as they appear (base64) in the
// EncryptionInfo stream, and the package ("intermediate") key they wrap.
struct AgilePasswordKey {
  std::array<uint8_t, kAgileSaltBytes> salt{};
  std::array<uint8_t, 16> encrypted_verifier_hash_input{};
  std::array<uint8_t, kAgileHashBytes> encrypted_verifier_hash_value{};
  std::array<uint8_t, kAgileKeyBytes> encrypted_key_value{};
  std::array<uint8_t, kAgileKeyBytes> package_key{};  // secret
};

// One WinZip AE-2 entry's keys: PBKDF2-HMAC-SHA1(password, salt, 1000) split
// into the AES-256 key, the HMAC-SHA1 key and the 2-byte password verifier.
struct ZipEntryKey {
  std::array<uint8_t, 16> salt{};
  std::array<uint8_t, 32> aes_key{};   // secret
  std::array<uint8_t, 32> hmac_key{};  // secret
  std::array<uint8_t, 2> verifier{};
};

struct FileKeyMaterial {
  AgilePasswordKey agile{};
  std::vector<ZipEntryKey> zip_keys{};
};

// InvalidArgument naming what is wrong when `bytes` is not a complete
// version-1 material (wrong version, truncated, count out of range, trailing
// bytes). Reads outside bytes: fuzzed (tests/render/fuzz/).
StatusOr<FileKeyMaterial> ParseFileKeyMaterial(std::string_view bytes);
std::string SerializeFileKeyMaterial(const FileKeyMaterial& material);

// The Agile password key for one block key (MS-OFFCRYPTO 2.3.4.11): the
// spun hash of salt + UTF-16LE(password), then SHA-512(hash + block_key),
// cut to 32 bytes. `spun_hash` comes from AgileSpunHash.
std::array<uint8_t, kAgileHashBytes> AgileSpunHash(std::string_view password_utf8,
                                                   const std::array<uint8_t, kAgileSaltBytes>& salt,
                                                   int spin_count = kAgileSpinCount);
std::array<uint8_t, kAgileKeyBytes> AgileBlockKeyFromHash(
    const std::array<uint8_t, kAgileHashBytes>& spun_hash, const std::array<uint8_t, 8>& block_key);

// Block keys of MS-OFFCRYPTO 2.3.4.11 and 2.3.4.14.
inline constexpr std::array<uint8_t, 8> kVerifierHashInputBlock{0xfe, 0xa7, 0xd2, 0x76,
                                                                0x3b, 0x4b, 0x9e, 0x79};
inline constexpr std::array<uint8_t, 8> kVerifierHashValueBlock{0xd7, 0xaa, 0x0f, 0x6d,
                                                                0x30, 0x61, 0x34, 0x4e};
inline constexpr std::array<uint8_t, 8> kEncryptedKeyValueBlock{0x14, 0x6e, 0x0b, 0xe7,
                                                                0xab, 0xac, 0xd0, 0xd6};
inline constexpr std::array<uint8_t, 8> kIntegrityKeyBlock{0x5f, 0xb2, 0xad, 0x01,
                                                           0x0c, 0xb9, 0xe1, 0xf6};
inline constexpr std::array<uint8_t, 8> kIntegrityValueBlock{0xa0, 0x67, 0x7f, 0x02,
                                                             0xb2, 0x2c, 0x84, 0x33};

}  // namespace export_center::render::encryption
