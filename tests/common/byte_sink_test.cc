#include "common/byte_sink.h"

#include <gtest/gtest.h>

#include <string>

namespace export_center {
namespace {

class StringSink final : public ByteSink {
 public:
  Status Append(std::string_view bytes) override {
    if (fail_next) return Unavailable("disk full");
    bytes_.append(bytes);
    return Status::Ok();
  }
  bool fail_next = false;
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

constexpr char kAbcSha256[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(Sha256Sink, DigestsWhatPassesThroughInAnyPieces) {
  StringSink inner;
  Sha256Sink sink(&inner);
  ASSERT_TRUE(sink.Append("a").ok());
  ASSERT_TRUE(sink.Append("").ok());
  ASSERT_TRUE(sink.Append("bc").ok());
  EXPECT_EQ(inner.bytes(), "abc");
  EXPECT_EQ(HexOf(sink.digest()), kAbcSha256);
}

TEST(Sha256Sink, ReadingTheDigestDoesNotEndIt) {
  StringSink inner;
  Sha256Sink sink(&inner);
  ASSERT_TRUE(sink.Append("ab").ok());
  const std::string early = HexOf(sink.digest());
  ASSERT_TRUE(sink.Append("c").ok());
  EXPECT_NE(early, kAbcSha256);
  EXPECT_EQ(HexOf(sink.digest()), kAbcSha256);
}

TEST(Sha256Sink, BytesTheInnerSinkRefusedAreNotDigested) {
  StringSink inner;
  Sha256Sink sink(&inner);
  ASSERT_TRUE(sink.Append("abc").ok());
  inner.fail_next = true;
  EXPECT_EQ(sink.Append("more").code(), StatusCode::kUnavailable);
  EXPECT_EQ(HexOf(sink.digest()), kAbcSha256);
}

TEST(Sha256Sink, EmptyInput) {
  StringSink inner;
  Sha256Sink sink(&inner);
  EXPECT_EQ(HexOf(sink.digest()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace export_center
