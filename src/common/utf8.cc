#include "common/utf8.h"

#include <algorithm>

namespace export_center::utf8 {
namespace {

// The value of the `n`-byte sequence at the start of `s`, which the caller has
// already checked.
char32_t Assemble(std::string_view s, size_t n) {
  const auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[k])); };
  switch (n) {
    case 1:
      return b(0);
    case 2:
      return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
    case 3:
      return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
    default:
      return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
  }
}

}  // namespace

size_t Decode(std::string_view s, char32_t* cp) {
  if (s.empty()) return 0;
  const size_t n = SequenceLength(s, 0);
  if (n != 0) *cp = Assemble(s, n);
  return n;
}

size_t DecodeAllowingSurrogates(std::string_view s, char32_t* cp) {
  if (s.empty()) return 0;
  const size_t n = internal::SequenceLength(s, 0, /*allow_surrogates=*/true);
  if (n != 0) *cp = Assemble(s, n);
  return n;
}

void Append(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp <= 0x10FFFF) {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->append(kReplacement);
  }
}

bool IsValid(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

size_t CountCodePoints(std::string_view text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !IsContinuation(c); }));
}

std::string_view TruncateBytes(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  while (cut > 0 && IsContinuation(text[cut])) --cut;
  return text.substr(0, cut);
}

namespace {

// Copies text[*i...] to *out with each invalid byte as U+FFFD, stopping once
// *out holds more than `stop_after` bytes.
void AppendRepaired(std::string_view text, size_t stop_after, size_t* i, std::string* out) {
  while (*i < text.size() && out->size() <= stop_after) {
    const size_t n = SequenceLength(text, *i);
    if (n == 0) {
      out->append(kReplacement);
      ++*i;
    } else {
      out->append(text.substr(*i, n));
      *i += n;
    }
  }
}

}  // namespace

std::string MakeValid(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  AppendRepaired(text, std::string::npos, &i, &out);
  return out;
}

std::string Excerpt(std::string_view text, size_t max_bytes) {
  constexpr std::string_view kMore = "...";
  std::string out;
  size_t i = 0;
  // Repaired as it is copied, and only until the copy passes max_bytes: a
  // replacement is longer than the byte it stands for, so the cut is made on
  // the repaired text, where every boundary is a character's.
  AppendRepaired(text, max_bytes, &i, &out);
  if (i == text.size() && out.size() <= max_bytes) return out;
  if (max_bytes < kMore.size()) {
    out.resize(TruncateBytes(out, max_bytes).size());
    return out;
  }
  out.resize(TruncateBytes(out, max_bytes - kMore.size()).size());
  out.append(kMore);
  return out;
}

std::string_view TruncateUtf16Units(std::string_view text, size_t max_units) {
  // Every character has at least as many bytes as UTF-16 units.
  if (text.size() <= max_units) return text;
  size_t units = 0;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t bytes = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    const size_t need = bytes == 4 ? 2 : 1;  // above U+FFFF: a surrogate pair
    if (units + need > max_units) break;
    units += need;
    i += bytes;
  }
  return text.substr(0, i);
}

bool IsControlOrBidi(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return true;
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::string DropUnsafeFileNameChars(std::string_view name) {
  std::string out;
  while (!name.empty()) {
    char32_t cp = 0;
    const size_t n = Decode(name, &cp);
    if (n == 0) {  // invalid byte: drop it and resynchronise
      name.remove_prefix(1);
      continue;
    }
    if (cp != '/' && cp != '\\' && !IsControlOrBidi(cp)) out.append(name.substr(0, n));
    name.remove_prefix(n);
  }
  return out;
}

std::string SanitizeFileName(std::string_view name, std::string_view fallback) {
  const std::string out = DropUnsafeFileNameChars(name);
  const size_t start = out.find_first_not_of(" .");
  if (start == std::string::npos) return std::string(fallback);
  const size_t end = out.find_last_not_of(' ');
  return out.substr(start, end - start + 1);
}

}  // namespace export_center::utf8
