#include "api/download_util.h"

#include <gtest/gtest.h>

namespace export_center::api {
namespace {

TEST(ContentDisposition, Rfc5987WithAsciiFallback) {
  EXPECT_EQ(ContentDisposition("report.csv"),
            "attachment; filename=\"report.csv\"; filename*=UTF-8''report.csv");
  EXPECT_EQ(ContentDisposition("客户 列表.xlsx"),
            "attachment; filename=\"__ __.xlsx\"; "
            "filename*=UTF-8''%E5%AE%A2%E6%88%B7%20%E5%88%97%E8%A1%A8.xlsx");
  EXPECT_EQ(ContentDisposition("a\"b;c%.csv"),
            "attachment; filename=\"a_b;c%.csv\"; filename*=UTF-8''a%22b%3Bc%25.csv");
}

TEST(Range, WholeWhenAbsentOrUnusable) {
  EXPECT_EQ(DecideRange("", 100).kind, RangeDecision::kWhole);
  EXPECT_EQ(DecideRange("items=0-5", 100).kind, RangeDecision::kWhole);
  EXPECT_EQ(DecideRange("bytes=0-5,10-20", 100).kind, RangeDecision::kWhole);
  EXPECT_EQ(DecideRange("bytes=5-1", 100).kind, RangeDecision::kWhole);
  EXPECT_EQ(DecideRange("bytes=a-b", 100).kind, RangeDecision::kWhole);
  EXPECT_EQ(DecideRange("bytes=-", 100).kind, RangeDecision::kWhole);
}

TEST(Range, Partial) {
  auto r = DecideRange("bytes=0-9", 100);
  EXPECT_EQ(r.kind, RangeDecision::kPartial);
  EXPECT_EQ(r.offset, 0u);
  EXPECT_EQ(r.length, 10u);
  r = DecideRange("bytes=90-", 100);
  EXPECT_EQ(r.offset, 90u);
  EXPECT_EQ(r.length, 10u);
  r = DecideRange("bytes=90-1000", 100);
  EXPECT_EQ(r.length, 10u);
  r = DecideRange("bytes=-5", 100);
  EXPECT_EQ(r.offset, 95u);
  EXPECT_EQ(r.length, 5u);
  r = DecideRange("bytes=-500", 100);
  EXPECT_EQ(r.offset, 0u);
  EXPECT_EQ(r.length, 100u);
  r = DecideRange("Bytes=99-99", 100);
  EXPECT_EQ(r.kind, RangeDecision::kPartial);
  EXPECT_EQ(r.length, 1u);
  r = DecideRange("bytes=1-99999999999999999999999", 100);
  EXPECT_EQ(r.length, 99u);
}

TEST(Range, Unsatisfiable) {
  EXPECT_EQ(DecideRange("bytes=100-", 100).kind, RangeDecision::kUnsatisfiable);
  EXPECT_EQ(DecideRange("bytes=100-200", 100).kind, RangeDecision::kUnsatisfiable);
  EXPECT_EQ(DecideRange("bytes=-0", 100).kind, RangeDecision::kUnsatisfiable);
  EXPECT_EQ(DecideRange("bytes=0-", 0).kind, RangeDecision::kUnsatisfiable);
  EXPECT_EQ(DecideRange("bytes=99999999999999999999999-", 100).kind, RangeDecision::kUnsatisfiable);
}

TEST(ReprDigest, ByteSequenceOfTheHexDigest) {
  // SHA-256("abc") and SHA-256(""), as FIPS 180-2 and Python's hashlib give them.
  EXPECT_EQ(ReprDigest("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            "sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:");
  EXPECT_EQ(ReprDigest("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:");
}

TEST(ReprDigest, NothingForADamagedValue) {
  EXPECT_EQ(ReprDigest(""), std::nullopt);
  EXPECT_EQ(ReprDigest("ba7816bf"), std::nullopt);
  // Upper case, a non-hex digit, one digit too many.
  EXPECT_EQ(ReprDigest("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"),
            std::nullopt);
  EXPECT_EQ(ReprDigest("zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            std::nullopt);
  EXPECT_EQ(ReprDigest("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0"),
            std::nullopt);
}

}  // namespace
}  // namespace export_center::api
