#pragma once
// ASCII case folding: the one copy for every case-insensitive protocol word
// (HTTP field names and tokens, the Bearer scheme, the Range unit, SQL
// keywords, config enum values, credential keys, SigV4 header names).
//
// Hand-written rather than std::tolower or boost::algorithm::iequals: those
// follow the global C/C++ locale (a Turkish locale folds 'I' to a dotless i)
// and std::tolower is undefined for a negative char, while every word compared
// here is ASCII by its protocol. Only 'A'-'Z' and 'a'-'z' change; every other
// byte, UTF-8 included, is left as it is. common/ links no Boost.
//
// Pure, header-only and thread-safe.

#include <algorithm>
#include <string>
#include <string_view>

namespace export_center {

constexpr char ToLowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
constexpr char ToUpperAscii(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }

// `text` with 'A'-'Z' turned into 'a'-'z' (ToUpperAscii: the other way).
inline std::string ToLowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ToLowerAscii(c);
  return out;
}
inline std::string ToUpperAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ToUpperAscii(c);
  return out;
}

// Whether `a` and `b` are equal once ASCII letters are folded.
constexpr bool EqualsIgnoreCaseAscii(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ToLowerAscii(x) == ToLowerAscii(y);
         });
}

// Whether `text` begins with `prefix`, ASCII letters folded.
constexpr bool StartsWithIgnoreCaseAscii(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         EqualsIgnoreCaseAscii(text.substr(0, prefix.size()), prefix);
}

}  // namespace export_center
