#include "api/download_util.h"

#include <cctype>
#include <cstdio>
#include <optional>

namespace export_center::api {
namespace {

// Parses decimal digits, saturating at UINT64_MAX; nullopt if empty or not digits.
std::optional<uint64_t> ParseDigits(std::string_view s) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t d = static_cast<uint64_t>(c - '0');
    v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
  }
  return v;
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 5987 attr-char: everything else is percent-encoded.
bool IsAttrChar(unsigned char c) {
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!': case '#': case '$': case '&': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

}  // namespace

size_t DecodeUtf8(std::string_view s, char32_t* cp) {
  if (s.empty()) return 0;
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = b(0);
  size_t len;
  char32_t v;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2, v = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, v = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, v = c & 0x07;
  } else {
    return 0;
  }
  if (s.size() < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(i) & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

bool IsControlOrBidi(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return true;
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::string SanitizeFileName(std::string_view name, std::string_view fallback) {
  std::string out;
  while (!name.empty()) {
    char32_t cp = 0;
    size_t n = DecodeUtf8(name, &cp);
    if (n == 0) {  // invalid byte: drop it and resynchronise
      name.remove_prefix(1);
      continue;
    }
    if (cp != '/' && cp != '\\' && !IsControlOrBidi(cp)) out.append(name.substr(0, n));
    name.remove_prefix(n);
  }
  size_t start = out.find_first_not_of(" .");
  size_t end = out.find_last_not_of(' ');
  if (start == std::string::npos) return std::string(fallback);
  return out.substr(start, end - start + 1);
}

std::string ContentDisposition(std::string_view file_name) {
  std::string ascii;
  std::string encoded;
  std::string_view rest = file_name;
  while (!rest.empty()) {
    char32_t cp = 0;
    size_t n = DecodeUtf8(rest, &cp);
    if (n == 0) n = 1, cp = 0xFFFD;
    ascii.push_back(cp < 0x80 && cp >= 0x20 && cp != '"' && cp != '\\' ? static_cast<char>(cp)
                                                                        : '_');
    rest.remove_prefix(n);
  }
  for (unsigned char c : file_name) {
    if (IsAttrChar(c)) {
      encoded.push_back(static_cast<char>(c));
    } else {
      char pct[4];
      std::snprintf(pct, sizeof pct, "%%%02X", c);
      encoded += pct;
    }
  }
  return "attachment; filename=\"" + ascii + "\"; filename*=UTF-8''" + encoded;
}

RangeDecision DecideRange(std::string_view header, uint64_t size) {
  header = TrimSpaces(header);
  constexpr std::string_view kUnit = "bytes=";
  if (header.size() < kUnit.size()) return {};
  for (size_t i = 0; i < kUnit.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kUnit[i]) return {};
  }
  std::string_view spec = TrimSpaces(header.substr(kUnit.size()));
  size_t dash = spec.find('-');
  if (spec.find(',') != std::string_view::npos || dash == std::string_view::npos) return {};
  std::string_view first_text = TrimSpaces(spec.substr(0, dash));
  std::string_view last_text = TrimSpaces(spec.substr(dash + 1));
  RangeDecision unsatisfiable{RangeDecision::kUnsatisfiable, 0, 0};
  if (first_text.empty()) {  // suffix range: the last n bytes
    auto n = ParseDigits(last_text);
    if (!n) return {};
    if (*n == 0 || size == 0) return unsatisfiable;
    uint64_t len = *n < size ? *n : size;
    return {RangeDecision::kPartial, size - len, len};
  }
  auto first = ParseDigits(first_text);
  if (!first) return {};
  std::optional<uint64_t> last;
  if (!last_text.empty()) {
    last = ParseDigits(last_text);
    if (!last || *last < *first) return {};  // invalid spec: ignore the header
  }
  if (*first >= size) return unsatisfiable;
  uint64_t end = last && *last < size - 1 ? *last : size - 1;
  return {RangeDecision::kPartial, *first, end - *first + 1};
}

}  // namespace export_center::api
