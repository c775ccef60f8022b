#pragma once
// Bytes as text and back: hex, base64 and base64url (abseil's
// absl/strings/escaping.h is the model). The one place these encodings are
// written: a component never carries its own table of digits or alphabet
// (docs/conventions.md#shared-helpers). Digests and MACs are in digest.h.
//
// Pure functions, thread-safe. A decoder returns nullopt for text that is
// not in its encoding; it never throws.

#include <optional>
#include <string>
#include <string_view>

namespace export_center {

// Two lower-case hex digits per byte: "00ff10".
std::string HexEncode(std::string_view bytes);
// Two upper-case hex digits per byte: "00FF10" (RocketMQ's message ids).
std::string HexEncodeUpper(std::string_view bytes);
// The text HexEncode writes: an even number of lower-case hex digits;
// nullopt otherwise (an upper-case digit included: one spelling per value).
std::optional<std::string> HexDecode(std::string_view text);
// Whether every character is 0-9 or a-f (the empty text is).
bool IsLowerHex(std::string_view text);

// RFC 4648 §4 base64, padded with '='.
std::string Base64Encode(std::string_view bytes);
// RFC 4648 §4, padded: a length that is a multiple of 4, the standard
// alphabet, '=' only as the last one or two characters. Unused trailing bits
// are ignored, as OpenSSL's decoder does. No whitespace: a caller that
// accepts wrapped text removes it first.
std::optional<std::string> Base64Decode(std::string_view text);

// RFC 4648 §5 base64url without padding (JWTs, signed tokens).
std::string Base64UrlEncode(std::string_view bytes);
// Strict: only the url-safe alphabet, no padding, no whitespace, unused
// trailing bits zero (one canonical spelling per value).
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace export_center
