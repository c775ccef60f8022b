#include "common/ascii.h"

#include <gtest/gtest.h>

#include <clocale>
#include <string>

namespace export_center {
namespace {

TEST(Ascii, FoldsOnlyAsciiLetters) {
  EXPECT_EQ(ToLowerAscii("Content-Length: 42 [Z@]"), "content-length: 42 [z@]");
  EXPECT_EQ(ToUpperAscii("order_by desc `x`{z}"), "ORDER_BY DESC `X`{Z}");
  // '@' and '[' sit beside 'A' and 'Z', '`' and '{' beside 'a' and 'z'.
  EXPECT_EQ(ToLowerAscii('@'), '@');
  EXPECT_EQ(ToLowerAscii('['), '[');
  EXPECT_EQ(ToUpperAscii('`'), '`');
  EXPECT_EQ(ToUpperAscii('{'), '{');
  EXPECT_EQ(ToLowerAscii(""), "");
}

TEST(Ascii, LeavesUtf8AndHighBytesAlone) {
  const std::string text = "Ä客户İ\xff\x80";
  EXPECT_EQ(ToLowerAscii(text), text);
  EXPECT_EQ(ToUpperAscii(text), text);
  EXPECT_EQ(ToLowerAscii(static_cast<char>(0xC4)), static_cast<char>(0xC4));
}

TEST(Ascii, EqualsIgnoreCase) {
  EXPECT_TRUE(EqualsIgnoreCaseAscii("Transfer-Encoding", "transfer-encoding"));
  EXPECT_TRUE(EqualsIgnoreCaseAscii("", ""));
  EXPECT_FALSE(EqualsIgnoreCaseAscii("chunked", "chunked "));
  EXPECT_FALSE(EqualsIgnoreCaseAscii("chunked", "chunkes"));
  // Only letters fold: '@' is not '`' although they differ by 0x20 too.
  EXPECT_FALSE(EqualsIgnoreCaseAscii("@", "`"));
  EXPECT_FALSE(EqualsIgnoreCaseAscii("Ä", "ä"));
  static_assert(EqualsIgnoreCaseAscii("Bearer", "bEARER"));
}

TEST(Ascii, StartsWithIgnoreCase) {
  EXPECT_TRUE(StartsWithIgnoreCaseAscii("BYTES=0-99", "bytes="));
  EXPECT_TRUE(StartsWithIgnoreCaseAscii("bearer x", ""));
  EXPECT_FALSE(StartsWithIgnoreCaseAscii("byte", "bytes="));
  EXPECT_FALSE(StartsWithIgnoreCaseAscii("items=0-99", "bytes="));
}

// The reason it is hand-written: the result does not follow the C locale.
TEST(Ascii, DoesNotFollowTheLocale) {
  const char* previous = std::setlocale(LC_CTYPE, nullptr);
  const std::string saved = previous ? previous : "C";
  if (std::setlocale(LC_CTYPE, "tr_TR.ISO-8859-9") == nullptr) std::setlocale(LC_CTYPE, "C.UTF-8");
  EXPECT_EQ(ToLowerAscii("TITLE"), "title");
  EXPECT_TRUE(EqualsIgnoreCaseAscii("ID", "id"));
  std::setlocale(LC_CTYPE, saved.c_str());
}

}  // namespace
}  // namespace export_center
