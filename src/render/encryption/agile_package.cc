#include "render/encryption/agile_package.h"

#include <openssl/crypto.h>

#include <cstring>

namespace export_center::render::encryption {
namespace {

template <size_t N>
std::string_view View(const std::array<uint8_t, N>& a) {
  return {reinterpret_cast<const char*>(a.data()), N};
}

}  // namespace

AgilePackageEncryptor::~AgilePackageEncryptor() {
  OPENSSL_cleanse(key_.package_key.data(), key_.package_key.size());
  OPENSSL_cleanse(hmac_key_.data(), hmac_key_.size());
}

Status AgilePackageEncryptor::Init(const AgilePasswordKey& key) {
  key_ = key;
  EC_RETURN_IF_ERROR(RandomBytes(key_data_salt_.data(), key_data_salt_.size()));
  EC_RETURN_IF_ERROR(RandomBytes(hmac_key_.data(), hmac_key_.size()));
  EC_RETURN_IF_ERROR(cipher_.SetKey(key_.package_key.data()));
  // The HMAC key travels encrypted under the package key (2.3.4.14).
  uint8_t iv[16];
  IvFor(kIntegrityKeyBlock, iv);
  encrypted_hmac_key_.assign(kAgileHashBytes, '\0');
  return cipher_.Encrypt(iv, hmac_key_.data(), hmac_key_.size(),
                         reinterpret_cast<uint8_t*>(encrypted_hmac_key_.data()));
}

// IV = SHA-512(keyData salt + block key), cut to the block size (2.3.4.12).
void AgilePackageEncryptor::IvFor(const std::array<uint8_t, 8>& block_key, uint8_t* iv) const {
  uint8_t h[kAgileHashBytes];
  Sha512Of({View(key_data_salt_), View(block_key)}, h);
  std::memcpy(iv, h, 16);
}

Status AgilePackageEncryptor::EncryptSegment(uint32_t index, std::string_view plain,
                                             std::string* out) {
  if (plain.empty() || plain.size() > kAgileSegmentBytes) {
    return Internal("agile: bad segment length");
  }
  // Segment IVs use the segment number, little-endian, as the block key.
  const std::array<uint8_t, 8> block{
      static_cast<uint8_t>(index & 0xff), static_cast<uint8_t>((index >> 8) & 0xff),
      static_cast<uint8_t>((index >> 16) & 0xff), static_cast<uint8_t>(index >> 24)};
  uint8_t iv[kAgileHashBytes];
  Sha512Of({View(key_data_salt_), std::string_view(reinterpret_cast<const char*>(block.data()), 4)},
           iv);
  const size_t padded = (plain.size() + 15) / 16 * 16;
  const size_t at = out->size();
  out->append(plain);
  out->append(padded - plain.size(), '\0');
  auto* bytes = reinterpret_cast<uint8_t*>(out->data() + at);
  return cipher_.Encrypt(iv, bytes, padded, bytes);
}

StatusOr<std::string> AgilePackageEncryptor::EncryptionInfo(std::string_view hmac_value) {
  if (hmac_value.size() != kAgileHashBytes) return Internal("agile: bad HMAC length");
  uint8_t iv[16];
  IvFor(kIntegrityValueBlock, iv);
  std::string encrypted(kAgileHashBytes, '\0');
  EC_RETURN_IF_ERROR(cipher_.Encrypt(iv, reinterpret_cast<const uint8_t*>(hmac_value.data()),
                                     hmac_value.size(),
                                     reinterpret_cast<uint8_t*>(encrypted.data())));
  return Descriptor(encrypted_hmac_key_, encrypted);
}

size_t AgilePackageEncryptor::EncryptionInfoSize() const {
  return Descriptor(std::string(kAgileHashBytes, '\0'), std::string(kAgileHashBytes, '\0')).size();
}

std::string AgilePackageEncryptor::Descriptor(std::string_view encrypted_hmac_key,
                                              std::string_view encrypted_hmac_value) const {
  // Version 4.4, flags fAgile (0x40), then the XML as Office writes it.
  std::string s("\x04\x00\x04\x00\x40\x00\x00\x00", 8);
  constexpr std::string_view kCipher =
      R"( saltSize="16" blockSize="16" keyBits="256" hashSize="64" cipherAlgorithm="AES")"
      R"( cipherChaining="ChainingModeCBC" hashAlgorithm="SHA512")";
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n";
  s += R"(<encryption xmlns="http://schemas.microsoft.com/office/2006/encryption")"
       R"( xmlns:p="http://schemas.microsoft.com/office/2006/keyEncryptor/password")"
       R"( xmlns:c="http://schemas.microsoft.com/office/2006/keyEncryptor/certificate">)";
  s += "<keyData";
  s += kCipher;
  s += " saltValue=\"" + Base64(View(key_data_salt_)) + "\"/>";
  s += "<dataIntegrity encryptedHmacKey=\"" + Base64(encrypted_hmac_key) +
       "\" encryptedHmacValue=\"" + Base64(encrypted_hmac_value) + "\"/>";
  s +=
      R"(<keyEncryptors><keyEncryptor uri="http://schemas.microsoft.com/office/2006/keyEncryptor/password">)";
  s += "<p:encryptedKey spinCount=\"" + std::to_string(kAgileSpinCount) + "\"";
  s += kCipher;
  s += " saltValue=\"" + Base64(View(key_.salt)) + "\"";
  s += " encryptedVerifierHashInput=\"" + Base64(View(key_.encrypted_verifier_hash_input)) + "\"";
  s += " encryptedVerifierHashValue=\"" + Base64(View(key_.encrypted_verifier_hash_value)) + "\"";
  s += " encryptedKeyValue=\"" + Base64(View(key_.encrypted_key_value)) + "\"/>";
  s += "</keyEncryptor></keyEncryptors></encryption>";
  return s;
}

}  // namespace export_center::render::encryption
