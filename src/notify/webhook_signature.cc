#include "notify/webhook_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

namespace export_center::notify {

std::string WebhookSignature(std::string_view secret, std::string_view timestamp,
                             std::string_view body) {
  std::string message;
  message.reserve(timestamp.size() + 1 + body.size());
  message.append(timestamp).append(".").append(body);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(mac_len * 2);
  for (unsigned int i = 0; i < mac_len; ++i) {
    hex += kHex[mac[i] >> 4];
    hex += kHex[mac[i] & 0x0f];
  }
  return hex;
}

bool VerifyWebhookSignature(std::string_view secret, std::string_view timestamp,
                            std::string_view body, std::string_view header) {
  const std::string expected =
      std::string(kWebhookSignaturePrefix) + WebhookSignature(secret, timestamp, body);
  // Constant time, so a forger learns nothing from how long a refusal takes.
  return header.size() == expected.size() &&
         CRYPTO_memcmp(header.data(), expected.data(), expected.size()) == 0;
}

}  // namespace export_center::notify
