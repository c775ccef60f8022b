#pragma once
// UTF-8 (RFC 3629): validating, decoding, counting and cutting text, and
// making safe file names. The one place that knows the encoding's rules;
// every component that looks inside a string's bytes calls these.
//
// "Valid" means what RFC 3629 allows: no stray continuation bytes, no
// truncated sequences, no overlong forms (C0/C1 leads included), no UTF-16
// surrogates (U+D800..U+DFFF) and nothing above U+10FFFF.
//
// All functions are pure and thread-safe; string_views returned point into
// the argument.

#include <cstddef>
#include <string>
#include <string_view>

namespace export_center::utf8 {

// U+FFFD REPLACEMENT CHARACTER, what an invalid byte becomes where text must
// stay readable (cells, header fallbacks).
inline constexpr char32_t kReplacementChar = 0xFFFD;
inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Whether `c` is a continuation byte (10xxxxxx), i.e. not the start of a
// character.
inline bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

namespace internal {

// SequenceLength's body; `allow_surrogates` is constant at every call site,
// so the compiler drops the branch.
inline size_t SequenceLength(std::string_view s, size_t i, bool allow_surrogates) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = at(0);
  if (c < 0x80) return 1;
  const size_t left = s.size() - i;
  if (c >= 0xE1 && c <= 0xEC) {  // most CJK: checked first, it is the common case
    return left >= 3 && IsContinuation(s[i + 1]) && IsContinuation(s[i + 2]) ? 3 : 0;
  }
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && IsContinuation(s[i + 1]) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !IsContinuation(s[i + 1]) || !IsContinuation(s[i + 2])) return 0;
    if (c == 0xE0 && at(1) < 0xA0) return 0;                       // overlong
    if (c == 0xED && at(1) > 0x9F && !allow_surrogates) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !IsContinuation(s[i + 1]) || !IsContinuation(s[i + 2]) ||
        !IsContinuation(s[i + 3])) {
      return 0;
    }
    if (c == 0xF0 && at(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && at(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;  // a continuation byte, C0, C1 or F5..FF
}

}  // namespace internal

// Length in bytes (1-4) of the valid character starting at s[i], or 0 when
// the bytes there are not valid UTF-8. REQUIRES: i < s.size().
// Inline because the CSV and XLSX writers call it for every non-ASCII
// character they write.
inline size_t SequenceLength(std::string_view s, size_t i) {
  return internal::SequenceLength(s, i, /*allow_surrogates=*/false);
}

// Decodes the character at the start of `s` into *cp and returns its length
// in bytes, or returns 0 (leaving *cp alone) when `s` is empty or does not
// start with a valid character.
size_t Decode(std::string_view s, char32_t* cp);

// Like Decode, but also accepts the three-byte form of a surrogate
// (U+D800..U+DFFF, as WTF-8 does). Only for code that emulates Java strings,
// whose chars may be lone surrogates (sql_template's OGNL); everything else
// wants Decode.
size_t DecodeAllowingSurrogates(std::string_view s, char32_t* cp);

// Appends the UTF-8 form of `cp`. A surrogate is written in its three-byte
// form, which only DecodeAllowingSurrogates reads back; a value above
// U+10FFFF is written as U+FFFD.
void Append(char32_t cp, std::string* out);

// Whether all of `text` is valid UTF-8.
bool IsValid(std::string_view text);

// The number of bytes that start a character, i.e. the number of code points
// when `text` is valid. Limits "in characters, not bytes" are counted so.
size_t CountCodePoints(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that does not end
// inside a character. Returns `text` when it is short enough. Invalid bytes
// before the cut stay: for messages use Excerpt, which also repairs them.
std::string_view TruncateBytes(std::string_view text, size_t max_bytes);

// `text` with each byte that does not belong to a valid character replaced by
// U+FFFD (as the writers' cells do), resynchronising at the next character.
// Returns a copy of `text` when it is valid already.
std::string MakeValid(std::string_view text);

// The one way to quote data (a cell value, a reply's text, a foreign error)
// in a message that is stored, sent or serialized: `text` made valid
// (MakeValid) and cut to at most `max_bytes` bytes at a character boundary,
// ending in "..." when anything was cut. The result is always valid UTF-8
// and never longer than `max_bytes`; only about `max_bytes` bytes of a long
// `text` are read.
std::string Excerpt(std::string_view text, size_t max_bytes);

// The longest prefix of valid UTF-8 `text` with at most `max_units` UTF-16
// code units (a character above U+FFFF takes two), never splitting a
// character. Excel and Java count string lengths this way.
std::string_view TruncateUtf16Units(std::string_view text, size_t max_units);

// Control characters (C0, DEL, C1) and the bidirectional formatting
// characters (ALM, LRM, RLM, LRE..RLO, LRI..PDI). In a file name or a header
// they can break the line or disguise a name: a right-to-left override shows
// "invoice\u202Excod.exe" as "invoiceexe.docx".
bool IsControlOrBidi(char32_t cp);

// `name` without path separators ('/' and '\\'), control and bidi characters,
// and invalid UTF-8 (dropped byte by byte, resynchronising at the next
// character). Nothing else changes: the result may be empty.
std::string DropUnsafeFileNameChars(std::string_view name);

// DropUnsafeFileNameChars, then leading spaces and dots (no hidden files, no
// "..") and trailing spaces trimmed. Returns `fallback` when nothing is left.
std::string SanitizeFileName(std::string_view name, std::string_view fallback);

}  // namespace export_center::utf8
