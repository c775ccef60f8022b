// The UTF-16 conversions of ognl_utf16.h.
#include "source/sql/sql_template/ognl_utf16.h"

#include "common/utf8.h"

namespace export_center::sql_template::internal {

void AppendUtf16(std::u16string& out, std::string_view s, size_t& i) {
  char32_t cp = utf8::kReplacementChar;
  const size_t n = utf8::DecodeAllowingSurrogates(s.substr(i), &cp);
  i += n == 0 ? 1 : n;
  if (cp >= 0x10000) {
    cp -= 0x10000;
    out += static_cast<char16_t>(0xD800 + (cp >> 10));
    out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
  } else {
    out += static_cast<char16_t>(cp);
  }
}

std::u16string ToUtf16(std::string_view s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) AppendUtf16(out, s, i);
  return out;
}

std::string FromUtf16(std::u16string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t cp = s[i];
    if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < s.size()) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (s[++i] - 0xDC00);
    }
    utf8::Append(cp, &out);
  }
  return out;
}

}  // namespace export_center::sql_template::internal
