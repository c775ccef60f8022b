#include "common/file_key_ring.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <cstdint>
#include <optional>

#include "common/digest.h"
#include "common/encoding.h"

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

// The wrapped form is base64 of nonce + ciphertext + tag; bounded before decoding.
StatusOr<std::string> FromBase64(std::string_view text) {
  std::optional<std::string> bytes;
  if (!text.empty() && text.size() <= kMaxSealedChars) bytes = Base64Decode(text);
  if (!bytes) return InvalidArgument("wrapped file key is not base64");
  return *std::move(bytes);
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
  return HexEncode(HmacSha256(secret, kKeyIdLabel)).substr(0, kKeyIdHexChars);
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
  return WrappedFileKey{current_id_, Base64Encode(out)};
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
