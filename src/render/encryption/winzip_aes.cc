#include "render/encryption/winzip_aes.h"

#include <openssl/crypto.h>

#include <algorithm>

namespace export_center::render::encryption {
namespace {

// Keystream made 4 KiB at a time: one EVP call per 256 counter blocks.
constexpr size_t kKeystreamBytes = 4096;

}  // namespace

WinZipAesEncryptor::WinZipAesEncryptor() : ecb_(EVP_CIPHER_CTX_new()) {}
WinZipAesEncryptor::~WinZipAesEncryptor() {
  EVP_CIPHER_CTX_free(ecb_);
  OPENSSL_cleanse(keystream_.data(), keystream_.size());
}

StatusOr<std::string> WinZipAesEncryptor::Start(const ZipEntryKey& key) {
  // CTR by hand over ECB: OpenSSL's CTR counts big-endian, WinZip's
  // (Gladman's fileenc) little-endian.
  if (ecb_ == nullptr ||
      EVP_EncryptInit_ex(ecb_, EVP_aes_256_ecb(), nullptr, key.aes_key.data(), nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(ecb_, 0) != 1) {
    return Internal("zip aes: AES-256 init failed");
  }
  EC_RETURN_IF_ERROR(hmac_.Init("SHA1", key.hmac_key.data(), key.hmac_key.size()));
  counter_ = 1;
  keystream_.assign(kKeystreamBytes, '\0');
  used_ = kKeystreamBytes;
  std::string header(reinterpret_cast<const char*>(key.salt.data()), key.salt.size());
  header.append(reinterpret_cast<const char*>(key.verifier.data()), key.verifier.size());
  return header;
}

Status WinZipAesEncryptor::Refill() {
  for (size_t at = 0; at < kKeystreamBytes; at += 16, ++counter_) {
    for (int i = 0; i < 16; ++i) {
      keystream_[at + i] = static_cast<char>(i < 8 ? (counter_ >> (8 * i)) & 0xff : 0);
    }
  }
  int len = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(keystream_.data());
  if (EVP_EncryptUpdate(ecb_, bytes, &len, bytes, static_cast<int>(kKeystreamBytes)) != 1 ||
      static_cast<size_t>(len) != kKeystreamBytes) {
    return Internal("zip aes: AES-256 failed");
  }
  used_ = 0;
  return Status::Ok();
}

Status WinZipAesEncryptor::Encrypt(std::string_view plain, std::string* out) {
  const size_t at = out->size();
  out->resize(at + plain.size());
  char* dst = out->data() + at;
  while (!plain.empty()) {
    if (used_ == kKeystreamBytes) EC_RETURN_IF_ERROR(Refill());
    const size_t n = std::min(plain.size(), kKeystreamBytes - used_);
    const char* ks = keystream_.data() + used_;
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<char>(plain[i] ^ ks[i]);
    dst += n;
    used_ += n;
    plain.remove_prefix(n);
  }
  return hmac_.Update(std::string_view(out->data() + at, out->size() - at));
}

StatusOr<std::string> WinZipAesEncryptor::Finish() {
  EC_ASSIGN_OR_RETURN(std::string mac, hmac_.Final());
  mac.resize(kWinZipAesAuthBytes);
  return mac;
}

}  // namespace export_center::render::encryption
