#pragma once
// Java's view of a string as UTF-16 units, for the OGNL lexer's \u escapes
// and the String methods that index (length, charAt, substring, indexOf).
// Internal to sql_template/.

#include <cstddef>
#include <string>
#include <string_view>

namespace export_center::sql_template::internal {

// Java strings are UTF-16; these convert at the edges of the methods that
// index them (length, charAt, substring, indexOf). A lone surrogate, as
// charAt or substring can make, survives the round trip in its three-byte
// form (utf8::DecodeAllowingSurrogates); an invalid byte becomes U+FFFD.

// Decodes the character at s[i] into UTF-16 units and moves i past it.
void AppendUtf16(std::u16string& out, std::string_view s, size_t& i);

std::u16string ToUtf16(std::string_view s);
std::string FromUtf16(std::u16string_view s);

}  // namespace export_center::sql_template::internal
