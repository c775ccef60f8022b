#include "api/download_util.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <optional>

#include "common/ascii.h"
#include "common/encoding.h"
#include "common/utf8.h"

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
    case '!':
    case '#':
    case '$':
    case '&':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string ContentDisposition(std::string_view file_name) {
  std::string ascii;
  std::string encoded;
  std::string_view rest = file_name;
  while (!rest.empty()) {
    char32_t cp = 0;
    size_t n = utf8::Decode(rest, &cp);
    if (n == 0) n = 1, cp = utf8::kReplacementChar;
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
  if (!StartsWithIgnoreCaseAscii(header, kUnit)) return {};
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

// The manifest writes lower-case hex (HexOf); nullopt otherwise.
std::optional<std::string> ReprDigest(std::string_view sha256_hex) {
  if (sha256_hex.size() != 64) return std::nullopt;
  auto digest = HexDecode(sha256_hex);
  if (!digest) return std::nullopt;
  return "sha-256=:" + Base64Encode(*digest) + ":";
}

Status ObjectBodySource::Next(size_t max_bytes, std::string* out) {
  Status s = reader_->ReadAt(next_, max_bytes, out);
  if (!s.ok()) {
    spdlog::error("download of task {} stopped: {}", task_id_, s.ToString());
    return s;
  }
  next_ += out->size();
  return Status::Ok();
}

}  // namespace export_center::api
