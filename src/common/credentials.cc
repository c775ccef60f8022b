#include "common/credentials.h"

#include <array>
#include <cctype>

#include "common/ascii.h"

namespace export_center::credentials {
namespace {

// Hand-written rather than std::regex: libpq's quoted values (with \' and
// \\ escapes) and the word-start rule are clearer as a scan, and the scan is
// linear on any input.

constexpr std::array<std::string_view, 11> kSecretKeys = {
    "password",  "passwd", "pwd",          "sslpassword", "secret", "secret_key",
    "secretkey", "token",  "access_token", "api_key",     "apikey"};

// A found secret: bytes [begin, end) of the text.
struct Span {
  size_t begin;
  size_t end;
};

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

bool IsSecretKey(std::string_view key) {
  for (std::string_view k : kSecretKeys) {
    if (EqualsIgnoreCaseAscii(key, k)) return true;
  }
  return false;
}

// The value after "key=" at `at`: a single-quoted libpq value (escapes
// allowed) or a bare one ending at space, '&', ';', '#' or the end.
Span ValueAt(std::string_view text, size_t at) {
  if (at < text.size() && text[at] == '\'') {
    size_t i = at + 1;
    while (i < text.size() && text[i] != '\'') i += text[i] == '\\' && i + 1 < text.size() ? 2 : 1;
    return {at + 1, std::min(i, text.size())};
  }
  size_t i = at;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) == 0 &&
         text[i] != '&' && text[i] != ';' && text[i] != '#' && text[i] != '"') {
    ++i;
  }
  return {at, i};
}

// "scheme://user:SECRET@": the SECRET of each URL in the text.
void FindUserInfoPasswords(std::string_view text, std::vector<Span>* out) {
  for (size_t scheme = text.find("://"); scheme != std::string_view::npos;
       scheme = text.find("://", scheme + 3)) {
    const size_t start = scheme + 3;
    size_t end = start;
    while (end < text.size() && text[end] != '/' && text[end] != '?' && text[end] != '#' &&
           std::isspace(static_cast<unsigned char>(text[end])) == 0 && text[end] != '"') {
      ++end;
    }
    // The last '@' of the authority ends the user info (a password may hold '@').
    const size_t at = text.substr(start, end - start).rfind('@');
    if (at == std::string_view::npos) continue;
    const size_t colon = text.substr(start, at).find(':');
    if (colon == std::string_view::npos) continue;
    out->push_back({start + colon + 1, start + at});
  }
}

// "key=SECRET" pairs, with optional spaces around '='.
void FindKeyValueSecrets(std::string_view text, std::vector<Span>* out) {
  size_t i = 0;
  while (i < text.size()) {
    if (!IsKeyChar(text[i]) || (i > 0 && IsKeyChar(text[i - 1]))) {
      ++i;
      continue;
    }
    size_t key_end = i;
    while (key_end < text.size() && IsKeyChar(text[key_end])) ++key_end;
    size_t eq = key_end;
    while (eq < text.size() && text[eq] == ' ') ++eq;
    if (eq < text.size() && text[eq] == '=' && IsSecretKey(text.substr(i, key_end - i))) {
      size_t value = eq + 1;
      while (value < text.size() && text[value] == ' ') ++value;
      Span span = ValueAt(text, value);
      if (span.end > span.begin) out->push_back(span);
      i = std::max(span.end, key_end);
    } else {
      i = key_end;
    }
  }
}

std::vector<Span> Spans(std::string_view text) {
  std::vector<Span> spans;
  FindUserInfoPasswords(text, &spans);
  FindKeyValueSecrets(text, &spans);
  return spans;
}

}  // namespace

std::string Mask(std::string_view text) {
  std::vector<Span> spans = Spans(text);
  std::vector<bool> secret(text.size(), false);
  for (const Span& s : spans) {
    for (size_t i = s.begin; i < s.end; ++i) secret[i] = true;
  }
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (!secret[i]) {
      out += text[i];
    } else if (i == 0 || !secret[i - 1]) {
      out += kMask;
    }
  }
  return out;
}

std::vector<std::string> Find(std::string_view text) {
  std::vector<std::string> found;
  for (const Span& s : Spans(text)) found.emplace_back(text.substr(s.begin, s.end - s.begin));
  return found;
}

}  // namespace export_center::credentials
