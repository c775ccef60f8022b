#pragma once
// The signature of a webhook body (docs/notifications.md#verifying-the-signature):
// lower-case hex of HMAC-SHA256(secret, timestamp + "." + body). The
// timestamp is the decimal Unix time in seconds sent in the
// X-Export-Center-Timestamp header; signing it with the body lets a receiver
// refuse old replays. Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace export_center::notify {

inline constexpr char kWebhookEventIdHeader[] = "X-Export-Center-Event-Id";
inline constexpr char kWebhookTimestampHeader[] = "X-Export-Center-Timestamp";
inline constexpr char kWebhookSignatureHeader[] = "X-Export-Center-Signature";
inline constexpr char kWebhookAttemptHeader[] = "X-Export-Center-Attempt";
// The signature header's value is this prefix and the hex digest.
inline constexpr char kWebhookSignaturePrefix[] = "sha256=";

// 64 lower-case hex digits.
std::string WebhookSignature(std::string_view secret, std::string_view timestamp,
                             std::string_view body);

// Whether `header` (the signature header's value) is the signature of
// timestamp and body, compared in constant time.
bool VerifyWebhookSignature(std::string_view secret, std::string_view timestamp,
                            std::string_view body, std::string_view header);

}  // namespace export_center::notify
