#include "api/download_util.h"

#include <gtest/gtest.h>

namespace export_center::api {
namespace {

TEST(FileName, DropsSeparatorsControlAndBidi) {
  EXPECT_EQ(SanitizeFileName("客户列表_20240501.xlsx", "x"), "客户列表_20240501.xlsx");
  EXPECT_EQ(SanitizeFileName("../../etc/passwd", "x"), "etcpasswd");
  EXPECT_EQ(SanitizeFileName("a\\b/c.csv", "x"), "abc.csv");
  EXPECT_EQ(SanitizeFileName("bad\r\nname\t.csv", "x"), "badname.csv");
  EXPECT_EQ(SanitizeFileName("invoice\u202Excod.exe", "x"), "invoicexcod.exe");
  EXPECT_EQ(SanitizeFileName("a\u2066b\u200Fc\u061C.xlsx", "x"), "abc.xlsx");
  EXPECT_EQ(SanitizeFileName("\x80\xC2\x85ok.csv", "x"), "ok.csv");  // invalid byte, C1 NEL
  EXPECT_EQ(SanitizeFileName("bad\xff.csv", "x"), "bad.csv");
}

TEST(FileName, FallsBackWhenNothingIsLeft) {
  EXPECT_EQ(SanitizeFileName("", "export-1.xlsx"), "export-1.xlsx");
  EXPECT_EQ(SanitizeFileName("///", "export-1.xlsx"), "export-1.xlsx");
  EXPECT_EQ(SanitizeFileName(" .. ", "export-1.xlsx"), "export-1.xlsx");
  EXPECT_EQ(SanitizeFileName(".hidden.csv", "x"), "hidden.csv");
}

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
  EXPECT_EQ(DecideRange("bytes=99999999999999999999999-", 100).kind,
            RangeDecision::kUnsatisfiable);
}

TEST(Utf8, DecodesAndRejects) {
  char32_t cp = 0;
  EXPECT_EQ(DecodeUtf8("客", &cp), 3u);
  EXPECT_EQ(cp, U'客');
  EXPECT_EQ(DecodeUtf8("\xC0\xAF", &cp), 0u);        // overlong '/'
  EXPECT_EQ(DecodeUtf8("\xED\xA0\x80", &cp), 0u);    // surrogate
  EXPECT_EQ(DecodeUtf8("\xF4\x90\x80\x80", &cp), 0u);  // above U+10FFFF
  EXPECT_EQ(DecodeUtf8("\xE5\xAE", &cp), 0u);        // truncated
}

}  // namespace
}  // namespace export_center::api
