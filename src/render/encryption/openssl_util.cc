#include "render/encryption/openssl_util.h"

#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>

namespace export_center::render::encryption {

Status RandomBytes(uint8_t* out, size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1) return Internal("encryption: no random bytes");
  return Status::Ok();
}

void Sha512Of(std::initializer_list<std::string_view> parts, uint8_t* out) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha512(), nullptr);
  for (std::string_view p : parts) EVP_DigestUpdate(ctx.get(), p.data(), p.size());
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), out, &len);
}

AesCbc256::AesCbc256() : ctx_(EVP_CIPHER_CTX_new()) {}
AesCbc256::~AesCbc256() { EVP_CIPHER_CTX_free(ctx_); }

Status AesCbc256::SetKey(const uint8_t* key32) {
  if (ctx_ == nullptr ||
      EVP_EncryptInit_ex(ctx_, EVP_aes_256_cbc(), nullptr, key32, nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx_, 0) != 1) {
    return Internal("encryption: AES-256-CBC init failed");
  }
  keyed_ = true;
  return Status::Ok();
}

Status AesCbc256::Encrypt(const uint8_t* iv16, const uint8_t* in, size_t n, uint8_t* out) {
  if (!keyed_ || n % 16 != 0) return Internal("encryption: AES-256-CBC misuse");
  // A new IV on the keyed context: no second key schedule per segment.
  int len = 0;
  if (EVP_EncryptInit_ex(ctx_, nullptr, nullptr, nullptr, iv16) != 1 ||
      EVP_EncryptUpdate(ctx_, out, &len, in, static_cast<int>(n)) != 1 ||
      static_cast<size_t>(len) != n) {
    return Internal("encryption: AES-256-CBC failed");
  }
  return Status::Ok();
}

StreamingHmac::StreamingHmac() : mac_(EVP_MAC_fetch(nullptr, "HMAC", nullptr)) {}
StreamingHmac::~StreamingHmac() {
  EVP_MAC_CTX_free(ctx_);
  EVP_MAC_free(mac_);
}

Status StreamingHmac::Init(const char* digest, const uint8_t* key, size_t key_len) {
  EVP_MAC_CTX_free(ctx_);
  ctx_ = mac_ == nullptr ? nullptr : EVP_MAC_CTX_new(mac_);
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(digest), 0),
      OSSL_PARAM_construct_end()};
  if (ctx_ == nullptr || EVP_MAC_init(ctx_, key, key_len, params) != 1) {
    return Internal("encryption: HMAC init failed");
  }
  return Status::Ok();
}

Status StreamingHmac::Update(std::string_view bytes) {
  if (ctx_ == nullptr || EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(bytes.data()),
                                        bytes.size()) != 1) {
    return Internal("encryption: HMAC failed");
  }
  return Status::Ok();
}

StatusOr<std::string> StreamingHmac::Final() {
  std::string out(EVP_MAX_MD_SIZE, '\0');
  size_t len = 0;
  if (ctx_ == nullptr ||
      EVP_MAC_final(ctx_, reinterpret_cast<unsigned char*>(out.data()), &len, out.size()) != 1) {
    return Internal("encryption: HMAC failed");
  }
  out.resize(len);
  return out;
}

std::string Base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace export_center::render::encryption
