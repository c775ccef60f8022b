// The one set of encoders (common/encoding.h) and digests (common/digest.h),
// against the RFCs' own test vectors.

#include "common/encoding.h"

#include <gtest/gtest.h>

#include "common/digest.h"

namespace export_center {
namespace {

TEST(Hex, BothCasesAndStrictDecode) {
  EXPECT_EQ(HexEncode(std::string("\x00\xff\x10\xab", 4)), "00ff10ab");
  EXPECT_EQ(HexEncodeUpper(std::string("\x00\xff\x10\xab", 4)), "00FF10AB");
  EXPECT_EQ(HexEncode(""), "");
  EXPECT_EQ(HexDecode("00ff10ab"), std::string("\x00\xff\x10\xab", 4));
  for (const char* bad : {"0", "00FF", "0g", "0 "}) EXPECT_FALSE(HexDecode(bad)) << bad;
  EXPECT_TRUE(IsLowerHex("0123456789abcdef"));
  EXPECT_FALSE(IsLowerHex("ABC"));
}

// RFC 4648 §10.
TEST(Base64, RfcVectors) {
  const char* vectors[][3] = {{"", "", ""},
                              {"f", "Zg==", "Zg"},
                              {"fo", "Zm8=", "Zm8"},
                              {"foo", "Zm9v", "Zm9v"},
                              {"foob", "Zm9vYg==", "Zm9vYg"},
                              {"fooba", "Zm9vYmE=", "Zm9vYmE"},
                              {"foobar", "Zm9vYmFy", "Zm9vYmFy"}};
  for (const auto& v : vectors) {
    EXPECT_EQ(Base64Encode(v[0]), v[1]);
    EXPECT_EQ(Base64Decode(v[1]), v[0]);
    EXPECT_EQ(Base64UrlEncode(v[0]), v[2]);
    EXPECT_EQ(Base64UrlDecode(v[2]), v[0]);
  }
  EXPECT_EQ(Base64Encode("\xfb\xff"), "+/8=");
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
}

TEST(Base64, DecodersRefuseOtherText) {
  for (const char* bad : {"Zg", "Zg=", "Z===", "Zm9v\n", "-_8=", "Zg==Zg==", "Z=g="}) {
    EXPECT_FALSE(Base64Decode(bad)) << bad;
  }
  EXPECT_EQ(Base64Decode("Zh=="), "f");  // unused bits ignored, as OpenSSL's decoder does
  for (const char* bad : {"Zg==", "+/8", "Zh", "Z", "Zm9v Yg"}) {
    EXPECT_FALSE(Base64UrlDecode(bad)) << bad;  // strict: one spelling per value
  }
}

TEST(Digest, RfcVectors) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256("abc").size(), 32u);
  // RFC 4231 test case 2 and RFC 2202 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(HexEncode(HmacSha1("Jefe", "what do ya want for nothing?")),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  EXPECT_TRUE(SecureEquals("abc", "abc"));
  EXPECT_FALSE(SecureEquals("abc", "abd"));
  EXPECT_FALSE(SecureEquals("abc", "ab"));
}

}  // namespace
}  // namespace export_center
