#include "notify/webhook_signature.h"

#include <string>

#include "common/digest.h"
#include "common/encoding.h"

namespace export_center::notify {

std::string WebhookSignature(std::string_view secret, std::string_view timestamp,
                             std::string_view body) {
  std::string message;
  message.reserve(timestamp.size() + 1 + body.size());
  message.append(timestamp).append(".").append(body);
  return HexEncode(HmacSha256(secret, message));
}

bool VerifyWebhookSignature(std::string_view secret, std::string_view timestamp,
                            std::string_view body, std::string_view header) {
  const std::string expected =
      std::string(kWebhookSignaturePrefix) + WebhookSignature(secret, timestamp, body);
  // Constant time, so a forger learns nothing from how long a refusal takes.
  return SecureEquals(header, expected);
}

}  // namespace export_center::notify
