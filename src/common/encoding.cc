#include "common/encoding.h"

#include <cstdint>

namespace export_center {
namespace {

constexpr char kLowerDigits[] = "0123456789abcdef";
constexpr char kUpperDigits[] = "0123456789ABCDEF";
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Hex(std::string_view bytes, const char* digits) {
  std::string out(bytes.size() * 2, '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = digits[b >> 4];
    out[2 * i + 1] = digits[b & 0x0f];
  }
  return out;
}

int LowerHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Six bits per character, most significant first; a last group of fewer
// than six bits is padded with zero bits.
std::string EncodeSixBits(std::string_view bytes, const char* alphabet) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  uint32_t buf = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buf = (buf << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(alphabet[(buf >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(alphabet[(buf << (6 - bits)) & 0x3F]);
  return out;
}

int SixBitsValue(char c, bool url) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == (url ? '-' : '+')) return 62;
  if (c == (url ? '_' : '/')) return 63;
  return -1;
}

// Decodes unpadded text; `strict`: the unused trailing bits must be zero.
std::optional<std::string> DecodeSixBits(std::string_view text, bool url, bool strict) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t buf = 0;
  int bits = 0;
  for (char c : text) {
    const int v = SixBitsValue(c, url);
    if (v < 0) return std::nullopt;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xFF));
    }
  }
  if (strict && bits > 0 && (buf & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace

std::string HexEncode(std::string_view bytes) { return Hex(bytes, kLowerDigits); }

std::string HexEncodeUpper(std::string_view bytes) { return Hex(bytes, kUpperDigits); }

std::optional<std::string> HexDecode(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out(text.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int high = LowerHexValue(text[2 * i]);
    const int low = LowerHexValue(text[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out[i] = static_cast<char>(high * 16 + low);
  }
  return out;
}

bool IsLowerHex(std::string_view text) {
  for (char c : text) {
    if (LowerHexValue(c) < 0) return false;
  }
  return true;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out = EncodeSixBits(bytes, kBase64);
  out.append((4 - out.size() % 4) % 4, '=');
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  return DecodeSixBits(text.substr(0, text.size() - pad), /*url=*/false, /*strict=*/false);
}

std::string Base64UrlEncode(std::string_view bytes) { return EncodeSixBits(bytes, kBase64Url); }

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  return DecodeSixBits(text, /*url=*/true, /*strict=*/true);
}

}  // namespace export_center
