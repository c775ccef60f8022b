#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace export_center::utf8 {
namespace {

using namespace std::string_view_literals;  // "a\0b"sv keeps the NUL

// Malformed sequences of every kind RFC 3629 rules out, each on its own.
constexpr std::string_view kInvalid[] = {
    "\x80",                      // stray continuation byte
    "\xBF",                      // stray continuation byte
    "\xC0\xAF",                  // overlong '/' (C0 lead)
    "\xC1\xBF",                  // overlong U+007F (C1 lead)
    "\xE0\x80\xAF",              // overlong '/' in three bytes
    "\xE0\x9F\xBF",              // overlong U+07FF
    "\xF0\x80\x80\xAF",          // overlong '/' in four bytes
    "\xF0\x8F\xBF\xBF",          // overlong U+FFFF
    "\xED\xA0\x80",              // U+D800, high surrogate
    "\xED\xBF\xBF",              // U+DFFF, low surrogate
    "\xED\xA0\xBD\xED\xB8\x80",  // a surrogate pair spelled out (CESU-8)
    "\xF4\x90\x80\x80",          // U+110000, above the last code point
    "\xF5\x80\x80\x80",          // F5 lead
    "\xFE",                      // never in UTF-8
    "\xFF",                      // never in UTF-8
    "\xC3",                      // truncated two-byte
    "\xE5\xAE",                  // truncated three-byte
    "\xF0\x9F\x98",              // truncated four-byte
    "\xE5\x61\xAE",              // 'a' where a continuation byte belongs
};

// ---- SequenceLength / Decode -------------------------------------------------

TEST(Utf8SequenceLength, MeasuresEachLength) {
  EXPECT_EQ(SequenceLength("a", 0), 1u);
  EXPECT_EQ(SequenceLength("\0"sv, 0), 1u);
  EXPECT_EQ(SequenceLength("é", 0), 2u);
  EXPECT_EQ(SequenceLength("客", 0), 3u);
  EXPECT_EQ(SequenceLength("😀", 0), 4u);
  EXPECT_EQ(SequenceLength("a客b", 1), 3u);
  EXPECT_EQ(SequenceLength("a客b", 2), 0u);  // inside the character
}

TEST(Utf8SequenceLength, RejectsEveryMalformedSequence) {
  for (std::string_view bad : kInvalid) {
    EXPECT_EQ(SequenceLength(bad, 0), 0u) << ::testing::PrintToString(std::string(bad));
  }
}

TEST(Utf8Decode, DecodesTheEdgesOfEachLength) {
  struct Case {
    std::string_view bytes;
    char32_t cp;
  };
  for (const Case& c : {Case{"\x7F", 0x7F}, Case{"\xC2\x80", 0x80}, Case{"\xDF\xBF", 0x7FF},
                        Case{"\xE0\xA0\x80", 0x800}, Case{"\xED\x9F\xBF", 0xD7FF},
                        Case{"\xEE\x80\x80", 0xE000}, Case{"\xEF\xBF\xBF", 0xFFFF},
                        Case{"\xF0\x90\x80\x80", 0x10000}, Case{"\xF4\x8F\xBF\xBF", 0x10FFFF}}) {
    char32_t cp = 0;
    EXPECT_EQ(Decode(c.bytes, &cp), c.bytes.size());
    EXPECT_EQ(cp, c.cp);
  }
  char32_t cp = 0;
  EXPECT_EQ(Decode("客户", &cp), 3u);  // only the first character
  EXPECT_EQ(cp, U'客');
  EXPECT_EQ(Decode("😀", &cp), 4u);
  EXPECT_EQ(cp, U'😀');
}

TEST(Utf8Decode, RejectsMalformedAndLeavesTheOutputAlone) {
  for (std::string_view bad : kInvalid) {
    char32_t cp = U'x';
    EXPECT_EQ(Decode(bad, &cp), 0u) << ::testing::PrintToString(std::string(bad));
    EXPECT_EQ(cp, U'x');
  }
  char32_t cp = U'x';
  EXPECT_EQ(Decode("", &cp), 0u);
  EXPECT_EQ(cp, U'x');
}

TEST(Utf8DecodeAllowingSurrogates, AcceptsSurrogatesOnly) {
  char32_t cp = 0;
  EXPECT_EQ(DecodeAllowingSurrogates("\xED\xA0\x80", &cp), 3u);
  EXPECT_EQ(cp, 0xD800u);
  EXPECT_EQ(DecodeAllowingSurrogates("\xED\xBF\xBF", &cp), 3u);
  EXPECT_EQ(cp, 0xDFFFu);
  EXPECT_EQ(DecodeAllowingSurrogates("客", &cp), 3u);
  EXPECT_EQ(cp, U'客');
  // Everything else that is malformed stays malformed.
  for (std::string_view bad : {"\x80"sv, "\xC0\xAF"sv, "\xE0\x80\xAF"sv, "\xF0\x8F\xBF\xBF"sv,
                               "\xF4\x90\x80\x80"sv, "\xED\xA0"sv, ""sv}) {
    EXPECT_EQ(DecodeAllowingSurrogates(bad, &cp), 0u) << ::testing::PrintToString(std::string(bad));
  }
}

// ---- Append ------------------------------------------------------------------

TEST(Utf8Append, RoundTripsEveryLength) {
  for (char32_t cp : {char32_t{0}, char32_t{0x41}, char32_t{0x7F}, char32_t{0x80}, char32_t{0x7FF},
                      char32_t{0x800}, char32_t{0xFFFD}, char32_t{0xFFFF}, char32_t{0x10000},
                      char32_t{0x1F600}, char32_t{0x10FFFF}}) {
    std::string out;
    Append(cp, &out);
    char32_t back = 0;
    ASSERT_EQ(Decode(out, &back), out.size()) << static_cast<uint32_t>(cp);
    EXPECT_EQ(back, cp);
  }
  std::string text;
  Append(U'客', &text);
  Append(U'😀', &text);
  EXPECT_EQ(text, "客😀");
}

TEST(Utf8Append, SurrogatesInThreeBytesAndOutOfRangeAsReplacement) {
  std::string lone;
  Append(0xD83D, &lone);
  EXPECT_EQ(lone, "\xED\xA0\xBD");
  char32_t cp = 0;
  EXPECT_EQ(Decode(lone, &cp), 0u);
  EXPECT_EQ(DecodeAllowingSurrogates(lone, &cp), 3u);
  EXPECT_EQ(cp, 0xD83Du);

  std::string too_big;
  Append(0x110000, &too_big);
  EXPECT_EQ(too_big, kReplacement);
}

// ---- IsValid / CountCodePoints -----------------------------------------------

TEST(Utf8IsValid, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValid(""));
  EXPECT_TRUE(IsValid("plain ascii"));
  EXPECT_TRUE(IsValid("a\0b"sv));
  EXPECT_TRUE(IsValid("客户列表_20240501.xlsx"));
  EXPECT_TRUE(IsValid("a😀b\xF4\x8F\xBF\xBF"));
  EXPECT_TRUE(IsValid("\xEF\xBF\xBE"));  // U+FFFE: a noncharacter, still UTF-8
}

TEST(Utf8IsValid, RejectsMalformedAnywhere) {
  for (std::string_view bad : kInvalid) {
    EXPECT_FALSE(IsValid(bad)) << ::testing::PrintToString(std::string(bad));
    EXPECT_FALSE(IsValid("ok " + std::string(bad) + " ok"))
        << ::testing::PrintToString(std::string(bad));
  }
}

TEST(Utf8CountCodePoints, CountsCharactersNotBytes) {
  EXPECT_EQ(CountCodePoints(""), 0u);
  EXPECT_EQ(CountCodePoints("abc"), 3u);
  EXPECT_EQ(CountCodePoints("客户列表"), 4u);
  EXPECT_EQ(CountCodePoints("a😀b"), 3u);
  EXPECT_EQ(CountCodePoints("é\xF4\x8F\xBF\xBF"), 2u);
}

TEST(Utf8CountCodePoints, CountsEachByteThatStartsACharacterInInvalidText) {
  EXPECT_EQ(CountCodePoints("\x80\x80"), 0u);  // continuation bytes only
  EXPECT_EQ(CountCodePoints("\xFF\xFE"), 2u);  // never-valid bytes
  EXPECT_EQ(CountCodePoints("\xE5\xAE"), 1u);  // a truncated character
  EXPECT_EQ(CountCodePoints("\xC0\xAF"), 1u);  // an overlong character
}

// ---- truncation ----------------------------------------------------------------

TEST(Utf8TruncateBytes, CutsAtACharacterBoundary) {
  EXPECT_EQ(TruncateBytes("abc", 5), "abc");
  EXPECT_EQ(TruncateBytes("abc", 3), "abc");
  EXPECT_EQ(TruncateBytes("abc", 2), "ab");
  EXPECT_EQ(TruncateBytes("abc", 0), "");
  EXPECT_EQ(TruncateBytes("a客户", 4), "a客");  // exactly after 客
  EXPECT_EQ(TruncateBytes("a客户", 6), "a客");  // inside 户: back to its start
  EXPECT_EQ(TruncateBytes("a客户", 2), "a");
  EXPECT_EQ(TruncateBytes("😀😀", 7), "😀");
  EXPECT_EQ(TruncateBytes("😀😀", 3), "");
  EXPECT_EQ(TruncateBytes("é", 1), "");
}

TEST(Utf8TruncateBytes, ReturnsAViewIntoTheArgument) {
  const std::string text = "客户列表";
  std::string_view cut = TruncateBytes(text, 7);
  EXPECT_EQ(cut.data(), text.data());
  EXPECT_EQ(cut, "客户");
}

// ---- MakeValid / Excerpt -------------------------------------------------------

// One character of each length, and text of each.
constexpr std::string_view kOneOfEachLength[] = {"a", "é", "客", "😀"};

TEST(Utf8MakeValid, KeepsValidTextAndReplacesEachInvalidByte) {
  EXPECT_EQ(MakeValid(""), "");
  EXPECT_EQ(MakeValid("a客😀é\0b"sv), "a客😀é\0b"sv);
  EXPECT_EQ(MakeValid("a\xFF!"), "a\uFFFD!");
  EXPECT_EQ(MakeValid("\xE5\xAE"), "\uFFFD\uFFFD");       // a truncated 客: each byte
  EXPECT_EQ(MakeValid("\xE5\x61\xAE"), "\uFFFDa\uFFFD");  // resynchronises at 'a'
  EXPECT_EQ(MakeValid("2026年\xE5"), "2026年\uFFFD");
  for (std::string_view bad : kInvalid) {
    const std::string out = MakeValid(bad);
    EXPECT_TRUE(IsValid(out)) << ::testing::PrintToString(std::string(bad));
    EXPECT_NE(out.find(kReplacement), std::string::npos);
  }
}

TEST(Utf8Excerpt, ShortValidTextIsUnchanged) {
  EXPECT_EQ(Excerpt("", 10), "");
  EXPECT_EQ(Excerpt("2026年12月1日", 64), "2026年12月1日");
  EXPECT_EQ(Excerpt("abc", 3), "abc");  // exactly the limit: nothing cut, no "..."
}

TEST(Utf8Excerpt, LongTextEndsInAnEllipsisWithinTheLimit) {
  EXPECT_EQ(Excerpt("abcdefgh", 6), "abc...");
  EXPECT_EQ(Excerpt("客户列表", 9), "客户...");   // 12 bytes: 6 of them and "..."
  EXPECT_EQ(Excerpt("客户列表", 11), "客户...");  // 列 does not fit before "..."
  EXPECT_EQ(Excerpt("a\xFF\xFF", 3), "...");      // repaired first: 7 bytes
  EXPECT_EQ(Excerpt("abcd", 3), "...");
  EXPECT_EQ(Excerpt("abcd", 2), "ab");  // no room for the ellipsis
  EXPECT_EQ(Excerpt("客客", 2), "");
}

// The issue's kind of value: a Chinese date repeated past the 64 bytes quoted
// in a message, which the old substr(0, 64) cut inside a character.
TEST(Utf8Excerpt, TheIssuesChineseDateIsCutBetweenCharacters) {
  std::string value;
  for (int i = 0; i < 6; ++i) value += "下单日期2026年12月1日";
  ASSERT_FALSE(IsValid(value.substr(0, 64)));  // what the old cut produced
  const std::string out = Excerpt(value, 64);
  EXPECT_TRUE(IsValid(out));
  EXPECT_LE(out.size(), 64u);
  EXPECT_GE(out.size(), 64u - 3 - 2);  // at most a partial character short
  EXPECT_EQ(out.substr(out.size() - 3), "...");
  EXPECT_EQ(value.rfind(out.substr(0, out.size() - 3), 0), 0u);  // a prefix of the value
}

// Every cut position, for text made of characters of each length and of a
// mix: valid, within the limit, a prefix of the text (+ "..."), never empty of
// a character that fitted whole.
TEST(Utf8Excerpt, NeverCutsACodePointAtAnyPosition) {
  std::vector<std::string> texts;
  for (std::string_view c : kOneOfEachLength) {
    std::string t;
    for (int i = 0; i < 9; ++i) t += c;
    texts.push_back(t);
  }
  texts.push_back("a é客😀b客é😀😀a");
  for (const std::string& text : texts) {
    for (size_t max = 0; max <= text.size() + 4; ++max) {
      const std::string out = Excerpt(text, max);
      const std::string where = ::testing::PrintToString(text) + " max " + std::to_string(max);
      EXPECT_TRUE(IsValid(out)) << where;
      EXPECT_LE(out.size(), max) << where;
      if (text.size() <= max) {
        EXPECT_EQ(out, text) << where;
        continue;
      }
      std::string_view kept = out;
      if (max >= 3) {
        ASSERT_GE(out.size(), 3u) << where;
        EXPECT_EQ(out.substr(out.size() - 3), "...") << where;
        kept.remove_suffix(3);
      }
      EXPECT_EQ(text.compare(0, kept.size(), kept), 0) << where;
      // The cut is the longest one: the next character would not have fitted.
      const size_t room = max >= 3 ? max - 3 : max;
      EXPECT_GT(kept.size() + SequenceLength(text, kept.size()), room) << where;
    }
  }
}

TEST(Utf8Excerpt, InvalidInputBecomesValidOutputAtAnyLimit) {
  std::vector<std::string> texts;
  for (std::string_view bad : kInvalid) texts.push_back("x" + std::string(bad) + "客y");
  std::string mixed;
  for (std::string_view bad : kInvalid) mixed += "年" + std::string(bad);
  texts.push_back(mixed);
  for (const std::string& text : texts) {
    for (size_t max = 0; max <= MakeValid(text).size() + 4; ++max) {
      const std::string out = Excerpt(text, max);
      const std::string where = ::testing::PrintToString(text) + " max " + std::to_string(max);
      EXPECT_TRUE(IsValid(out)) << where;
      EXPECT_LE(out.size(), max) << where;
      if (MakeValid(text).size() <= max) {
        EXPECT_EQ(out, MakeValid(text)) << where;
      }
    }
  }
}

TEST(Utf8Excerpt, ReadsOnlyAboutTheLimitOfAHugeValue) {
  const std::string huge(64 << 20, '\xFF');  // 64 MiB of invalid bytes
  const std::string out = Excerpt(huge, 100);
  EXPECT_TRUE(IsValid(out));
  EXPECT_LE(out.size(), 100u);
}

TEST(Utf8TruncateUtf16Units, CountsSurrogatePairs) {
  EXPECT_EQ(TruncateUtf16Units("abc", 2), "ab");
  EXPECT_EQ(TruncateUtf16Units("abc", 3), "abc");
  EXPECT_EQ(TruncateUtf16Units("上海市", 2), "上海");
  EXPECT_EQ(TruncateUtf16Units("a😀", 2), "a");  // the pair does not fit
  EXPECT_EQ(TruncateUtf16Units("a😀", 3), "a😀");
  EXPECT_EQ(TruncateUtf16Units("😀b", 1), "");
  EXPECT_EQ(TruncateUtf16Units("éé", 1), "é");
  EXPECT_EQ(TruncateUtf16Units("x", 0), "");
}

TEST(Utf8TruncateUtf16Units, CutsAtExcelsCellLimit) {
  std::string cell;
  for (int i = 0; i < 32767; ++i) cell += "客";
  EXPECT_EQ(TruncateUtf16Units(cell, 32767).size(), cell.size());
  EXPECT_EQ(TruncateUtf16Units(cell + "x", 32767).size(), cell.size());
  std::string astral;
  for (int i = 0; i < 16384; ++i) astral += "😀";  // 32768 units
  EXPECT_EQ(TruncateUtf16Units(astral, 32767).size(), astral.size() - 4);
}

// ---- file names ------------------------------------------------------------------

TEST(Utf8IsControlOrBidi, ControlsAndBidiFormattingOnly) {
  for (char32_t cp :
       {char32_t{0x00}, char32_t{0x09}, char32_t{0x0A}, char32_t{0x1F}, char32_t{0x7F},
        char32_t{0x80}, char32_t{0x85}, char32_t{0x9F}, char32_t{0x061C}, char32_t{0x200E},
        char32_t{0x200F}, char32_t{0x202A}, char32_t{0x202E}, char32_t{0x2066}, char32_t{0x2069}}) {
    EXPECT_TRUE(IsControlOrBidi(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
  for (char32_t cp :
       {char32_t{' '}, char32_t{'a'}, char32_t{'~'}, char32_t{0xA0}, char32_t{0x200D},
        char32_t{0x2029}, char32_t{0x202F}, char32_t{0x2065}, char32_t{0x206A}, U'客', U'😀'}) {
    EXPECT_FALSE(IsControlOrBidi(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
}

TEST(Utf8DropUnsafeFileNameChars, RemovesOnlyWhatIsUnsafe) {
  EXPECT_EQ(DropUnsafeFileNameChars("客户/列表\u202E\x01..\\x"), "客户列表..x");
  EXPECT_EQ(DropUnsafeFileNameChars(" .hidden "), " .hidden ");  // no trimming here
  EXPECT_EQ(DropUnsafeFileNameChars("a😀b"), "a😀b");
  EXPECT_EQ(DropUnsafeFileNameChars("///"), "");
  EXPECT_EQ(DropUnsafeFileNameChars(""), "");
}

TEST(Utf8DropUnsafeFileNameChars, DropsInvalidUtf8ByteByByte) {
  EXPECT_EQ(DropUnsafeFileNameChars("bad\xff\xfe.csv"), "bad.csv");
  // 'b' is written \x62 so the hex escapes before it stay two digits long.
  EXPECT_EQ(DropUnsafeFileNameChars("a\xC0\xAF\x62"), "ab");          // overlong '/' is no '/'
  EXPECT_EQ(DropUnsafeFileNameChars("a\xED\xA0\x80\x62"), "ab");      // surrogate
  EXPECT_EQ(DropUnsafeFileNameChars("a\xF4\x90\x80\x80\x62"), "ab");  // above U+10FFFF
  EXPECT_EQ(DropUnsafeFileNameChars("\xE5\xAE客"), "客");  // resynchronises after a cut one
  EXPECT_EQ(DropUnsafeFileNameChars("end\xF0\x9F\x98"), "end");
  EXPECT_TRUE(IsValid(DropUnsafeFileNameChars("\xE5\xAE\xE5\xAE\xA2\xA2")));
}

TEST(Utf8SanitizeFileName, DropsSeparatorsControlAndBidi) {
  EXPECT_EQ(SanitizeFileName("客户列表_20240501.xlsx", "x"), "客户列表_20240501.xlsx");
  EXPECT_EQ(SanitizeFileName("../../etc/passwd", "x"), "etcpasswd");
  EXPECT_EQ(SanitizeFileName("a\\b/c.csv", "x"), "abc.csv");
  EXPECT_EQ(SanitizeFileName("bad\r\nname\t.csv", "x"), "badname.csv");
  EXPECT_EQ(SanitizeFileName("invoice\u202Excod.exe", "x"), "invoicexcod.exe");
  EXPECT_EQ(SanitizeFileName("a\u2066b\u200Fc\u061C.xlsx", "x"), "abc.xlsx");
  EXPECT_EQ(SanitizeFileName("\x80\xC2\x85ok.csv", "x"), "ok.csv");  // invalid byte, C1 NEL
  EXPECT_EQ(SanitizeFileName("bad\xff.csv", "x"), "bad.csv");
  EXPECT_EQ(SanitizeFileName("报表😀.csv", "x"), "报表😀.csv");
}

TEST(Utf8SanitizeFileName, TrimsAndFallsBackWhenNothingIsLeft) {
  EXPECT_EQ(SanitizeFileName("", "export-1.xlsx"), "export-1.xlsx");
  EXPECT_EQ(SanitizeFileName("///", "export-1.xlsx"), "export-1.xlsx");
  EXPECT_EQ(SanitizeFileName(" .. ", "export-1.xlsx"), "export-1.xlsx");
  EXPECT_EQ(SanitizeFileName("\xff\u202E", "export-1.xlsx"), "export-1.xlsx");
  EXPECT_EQ(SanitizeFileName(".hidden.csv", "x"), "hidden.csv");
  EXPECT_EQ(SanitizeFileName("  name.csv  ", "x"), "name.csv");
  EXPECT_EQ(SanitizeFileName("a . b", "x"), "a . b");  // inner dots and spaces stay
}

}  // namespace
}  // namespace export_center::utf8
