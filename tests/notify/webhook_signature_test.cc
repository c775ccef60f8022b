#include "notify/webhook_signature.h"

#include <gtest/gtest.h>

namespace export_center::notify {
namespace {

// The digest an independent implementation gives (Python: hmac.new(b"s3cret",
// b'1700000000.{"a":1}', hashlib.sha256).hexdigest()), so the documented
// recipe and the code agree.
TEST(WebhookSignatureTest, IsHexHmacSha256OfTimestampDotBody) {
  EXPECT_EQ(WebhookSignature("s3cret", "1700000000", R"({"a":1})"),
            "1698a50bc74d1ff1db85c4e0a5297c2ad9fdba245d5737cdb789e4cc6e098940");
}

TEST(WebhookSignatureTest, VerifiesOnlyTheExactTimestampBodyAndSecret) {
  const std::string header =
      std::string(kWebhookSignaturePrefix) + WebhookSignature("s3cret", "1700000000", R"({"a":1})");
  EXPECT_TRUE(VerifyWebhookSignature("s3cret", "1700000000", R"({"a":1})", header));
  EXPECT_FALSE(VerifyWebhookSignature("s3cret", "1700000001", R"({"a":1})", header));
  EXPECT_FALSE(VerifyWebhookSignature("s3cret", "1700000000", R"({"a":2})", header));
  EXPECT_FALSE(VerifyWebhookSignature("other", "1700000000", R"({"a":1})", header));
  EXPECT_FALSE(VerifyWebhookSignature("s3cret", "1700000000", R"({"a":1})",
                                      header.substr(std::string(kWebhookSignaturePrefix).size())));
  EXPECT_FALSE(VerifyWebhookSignature("s3cret", "1700000000", R"({"a":1})", ""));
}

}  // namespace
}  // namespace export_center::notify
