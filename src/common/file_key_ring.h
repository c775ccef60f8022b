#pragma once
// FileKeyRing: the key-encryption keys that keep the key material of
// password-protected files at rest (docs/configuration.md#password-protected-files-file-password).
//
// At create the center derives, from the requester's password, the secret
// material a writer needs to encrypt the file; the password itself is dropped
// at once. The material is stored only wrapped: AES-256-GCM under a key
// derived from `auth.file-key-encryption-key`, with a 96-bit random nonce and
// the key's id bound as associated data. Every attempt of the task unwraps it,
// so each retry writes a file the same password opens; the store erases the
// wrapped material when the task ends.
//
// Rotation: the current key wraps; keys listed as previous only unwrap. Each
// key has an id, a 16-hex-character fingerprint derived from it (never the
// key itself), stored beside the wrapped material, so a ring finds the key
// that wrapped it. A configured secret is any string of at least
// kMinFileKeyEncryptionKeyBytes bytes (e.g. `openssl rand -base64 48`); the
// 256-bit AES key is derived from it with HMAC-SHA-256.
//
// Immutable after Create; thread-safe.

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center {

// The secrets rule for auth.file-key-encryption-key (config/ checks it).
inline constexpr size_t kMinFileKeyEncryptionKeyBytes = 32;

// Key material wrapped by a FileKeyRing: what export_task stores.
struct WrappedFileKey {
  std::string key_id{};  // the id of the key that wrapped it
  std::string sealed{};  // base64 of nonce (12) | ciphertext | GCM tag (16)
};

class FileKeyRing {
 public:
  // `current` wraps (and unwraps); each of `previous` only unwraps. Either
  // may be empty: a ring without a current key unwraps only, an empty one
  // does nothing. InvalidArgument (naming no key) when a key is shorter than
  // kMinFileKeyEncryptionKeyBytes.
  static StatusOr<std::shared_ptr<const FileKeyRing>> Create(
      std::string_view current, const std::vector<std::string>& previous);

  // The id of `secret` as a key of a ring: 16 lower-case hex characters.
  static std::string KeyIdOf(std::string_view secret);

  bool CanWrap() const { return !current_id_.empty(); }
  const std::string& current_key_id() const { return current_id_; }

  // Wraps `material` under the current key. InvalidArgument without one (or
  // for empty material); Internal when OpenSSL fails.
  StatusOr<WrappedFileKey> Wrap(std::string_view material) const;

  // The material `wrapped` holds. NotFound when no key of the ring has its
  // key id (rotated away); InvalidArgument when it does not authenticate
  // under that key (altered, or not ours). Messages never quote key bytes.
  StatusOr<std::string> Unwrap(const WrappedFileKey& wrapped) const;

  FileKeyRing(const FileKeyRing&) = delete;
  FileKeyRing& operator=(const FileKeyRing&) = delete;
  ~FileKeyRing();

 private:
  FileKeyRing() = default;

  std::string current_id_;
  std::map<std::string, std::string> keys_;  // key id → 32-byte AES key
};

}  // namespace export_center
