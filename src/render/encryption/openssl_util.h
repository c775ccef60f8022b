#pragma once
// The OpenSSL calls the encrypted writers share (EVP only): random bytes,
// SHA-512, AES-256 in CBC without padding, a streaming HMAC. Internal to
// render/encryption/.

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center::render::encryption {

Status RandomBytes(uint8_t* out, size_t n);
// SHA-512 of the concatenated parts into out[64].
void Sha512Of(std::initializer_list<std::string_view> parts, uint8_t* out);

// AES-256-CBC without padding, one key, the IV set per message: Agile
// Encryption restarts the chain at every 4 096-byte segment.
class AesCbc256 {
 public:
  AesCbc256();
  ~AesCbc256();
  AesCbc256(const AesCbc256&) = delete;
  AesCbc256& operator=(const AesCbc256&) = delete;
  Status SetKey(const uint8_t* key32);
  // REQUIRES: n is a multiple of 16; `out` may equal `in`.
  Status Encrypt(const uint8_t* iv16, const uint8_t* in, size_t n, uint8_t* out);

 private:
  EVP_CIPHER_CTX* ctx_;
  bool keyed_ = false;
};

// HMAC over a stream of bytes (EVP_MAC): HMAC-SHA512 for Agile's data
// integrity, HMAC-SHA1 for a WinZip AES entry's authentication code.
class StreamingHmac {
 public:
  StreamingHmac();
  ~StreamingHmac();
  StreamingHmac(const StreamingHmac&) = delete;
  StreamingHmac& operator=(const StreamingHmac&) = delete;
  // `digest` is "SHA512" or "SHA1".
  Status Init(const char* digest, const uint8_t* key, size_t key_len);
  Status Update(std::string_view bytes);
  StatusOr<std::string> Final();

 private:
  EVP_MAC* mac_;
  EVP_MAC_CTX* ctx_ = nullptr;
};

std::string Base64(std::string_view bytes);

}  // namespace export_center::render::encryption
