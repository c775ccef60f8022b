#include "common/file_key_ring.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include <cstdint>

namespace export_center {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr size_t kKeyIdHexChars = 16;
// Bounds a stored value before any decoding: key material is about 10 KiB
// at most (render/encryption/file_key_material.h), its base64 about 14 KiB.
constexpr size_t kMaxSealedChars = 32 * 1024;

// Distinct labels, so the id published beside the wrapped material says
// nothing about the AES key.
constexpr std::string_view kWrapKeyLabel = "export-center file-key wrap key v1";
constexpr std::string_view kKeyIdLabel = "export-center file-key key id v1";
constexpr std::string_view kAadPrefix = "export-center file key v1|";

std::string HmacSha256(std::string_view key, std::string_view message) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(), &length);
  std::string result(reinterpret_cast<const char*>(out.data()), length);
  OPENSSL_cleanse(out.data(), out.size());
  return result;
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xF];
  }
  return out;
}

std::string Base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

StatusOr<std::string> FromBase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > kMaxSealedChars) {
    return InvalidArgument("wrapped file key is not base64");
  }
  std::string out(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return InvalidArgument("wrapped file key is not base64");
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t length = static_cast<size_t>(n);
  if (text.back() == '=') --length;
  if (text.size() >= 2 && text[text.size() - 2] == '=') --length;
  out.resize(length);
  return out;
}

struct CipherContext {
  CipherContext() : ctx(EVP_CIPHER_CTX_new()) {}
  ~CipherContext() { EVP_CIPHER_CTX_free(ctx); }
  CipherContext(const CipherContext&) = delete;
  CipherContext& operator=(const CipherContext&) = delete;
  EVP_CIPHER_CTX* ctx;
};

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

std::string FileKeyRing::KeyIdOf(std::string_view secret) {
  return Hex(HmacSha256(secret, kKeyIdLabel)).substr(0, kKeyIdHexChars);
}

StatusOr<std::shared_ptr<const FileKeyRing>> FileKeyRing::Create(
    std::string_view current, const std::vector<std::string>& previous) {
  std::shared_ptr<FileKeyRing> ring(new FileKeyRing());
  auto add = [&ring](std::string_view secret, const char* which) -> Status {
    if (secret.size() < kMinFileKeyEncryptionKeyBytes) {
      return InvalidArgument(std::string(which) + " file key-encryption key is shorter than " +
                             std::to_string(kMinFileKeyEncryptionKeyBytes) + " bytes");
    }
    ring->keys_.emplace(KeyIdOf(secret), HmacSha256(secret, kWrapKeyLabel));
    return Status::Ok();
  };
  if (!current.empty()) {
    EC_RETURN_IF_ERROR(add(current, "the current"));
    ring->current_id_ = KeyIdOf(current);
  }
  for (const std::string& old : previous) EC_RETURN_IF_ERROR(add(old, "a previous"));
  return std::shared_ptr<const FileKeyRing>(std::move(ring));
}

FileKeyRing::~FileKeyRing() {
  for (auto& [id, key] : keys_) OPENSSL_cleanse(key.data(), key.size());
}

StatusOr<WrappedFileKey> FileKeyRing::Wrap(std::string_view material) const {
  if (!CanWrap()) return InvalidArgument("no file key-encryption key is configured");
  if (material.empty()) return InvalidArgument("no file key material to wrap");
  const std::string& key = keys_.at(current_id_);
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), kNonceBytes) != 1) {
    return Internal("no random bytes for a file key nonce");
  }
  const std::string aad = std::string(kAadPrefix) + current_id_;
  std::string out = nonce;
  out.resize(kNonceBytes + material.size() + kTagBytes);
  auto* cipher_text = reinterpret_cast<unsigned char*>(out.data()) + kNonceBytes;
  CipherContext c;
  int n = 0, tail = 0;
  if (c.ctx == nullptr ||
      EVP_EncryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(c.ctx, nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(c.ctx, cipher_text, &n, Bytes(material),
                        static_cast<int>(material.size())) != 1 ||
      EVP_EncryptFinal_ex(c.ctx, cipher_text + n, &tail) != 1 ||
      EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes),
                          cipher_text + material.size()) != 1) {
    return Internal("AES-256-GCM could not wrap the file key");
  }
  return WrappedFileKey{current_id_, Base64(out)};
}

StatusOr<std::string> FileKeyRing::Unwrap(const WrappedFileKey& wrapped) const {
  auto found = keys_.find(wrapped.key_id);
  if (found == keys_.end()) {
    return NotFound("the file key-encryption key " + wrapped.key_id.substr(0, kKeyIdHexChars) +
                    " that wrapped this file key is no longer configured");
  }
  EC_ASSIGN_OR_RETURN(std::string sealed, FromBase64(wrapped.sealed));
  if (sealed.size() <= kNonceBytes + kTagBytes) {
    return InvalidArgument("wrapped file key is too short");
  }
  const std::string aad = std::string(kAadPrefix) + wrapped.key_id;
  const std::string_view nonce(sealed.data(), kNonceBytes);
  const size_t length = sealed.size() - kNonceBytes - kTagBytes;
  const std::string_view cipher_text(sealed.data() + kNonceBytes, length);
  std::string tag = sealed.substr(kNonceBytes + length);
  std::string out(length, '\0');
  auto* plain = reinterpret_cast<unsigned char*>(out.data());
  CipherContext c;
  int n = 0, tail = 0;
  if (c.ctx == nullptr ||
      EVP_DecryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, Bytes(found->second), Bytes(nonce)) !=
          1 ||
      EVP_DecryptUpdate(c.ctx, nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(c.ctx, plain, &n, Bytes(cipher_text),
                        static_cast<int>(cipher_text.size())) != 1 ||
      EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes), tag.data()) !=
          1 ||
      EVP_DecryptFinal_ex(c.ctx, plain + n, &tail) != 1) {
    OPENSSL_cleanse(out.data(), out.size());
    return InvalidArgument("the wrapped file key does not authenticate under key " +
                           wrapped.key_id);
  }
  return out;
}

}  // namespace export_center
