// The MIME message the center builds (notify/mail/mail_message.h) and the
// recipient check (mail_recipients.h). The round trip through a real mail
// reader is in mail_sender_test.cc (Python's email package on the server).

#include "notify/mail/mail_message.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/encoding.h"
#include "common/utf8.h"
#include "notify/mail/mail_recipients.h"

namespace export_center::notify::mail {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\r\n", start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 2;
  }
  return out;
}

// Decodes "=?UTF-8?B?…?=" words separated by CRLF + space, checking each.
std::string DecodeWords(const std::string& header) {
  std::string out;
  for (const std::string& line : Lines(header)) {
    std::string word = line.front() == ' ' ? line.substr(1) : line;
    EXPECT_LE(word.size(), 75u) << word;
    EXPECT_EQ(word.rfind("=?UTF-8?B?", 0), 0u) << word;
    EXPECT_EQ(word.substr(word.size() - 2), "?=");
    auto bytes = Base64Decode(word.substr(10, word.size() - 12));
    EXPECT_TRUE(bytes.has_value());
    EXPECT_TRUE(utf8::IsValid(*bytes)) << "a character split between two words";
    out += bytes.value_or("");
  }
  return out;
}

MailMessage Sample() {
  MailMessage m;
  m.from = "exports@example.com";
  m.to = {"alice@example.com", "bob@example.com"};
  m.subject = "Weekly orders";
  m.text = "Hello\nthe file is attached.";
  m.message_id = "<6e397850-c573-4b95@export-center>";
  m.date_ms = 1796900400000;  // 2026-12-10 11:00:00 UTC
  return m;
}

TEST(MailHeaderText, AsciiStaysAndUtf8BecomesShortWordsOnCharacterBoundaries) {
  EXPECT_EQ(EncodeHeaderText("Weekly orders"), "Weekly orders");
  const std::string subject = "每周订单导出 — Bestellungen für die Woche 📦 " + std::string(60, 'x');
  const std::string encoded = EncodeHeaderText(subject);
  EXPECT_GT(Lines(encoded).size(), 2u);
  EXPECT_EQ(DecodeWords(encoded), subject);
  // A line break cannot start a header of its own.
  const std::string injected = EncodeHeaderText("hi\r\nBcc: eve@evil.test");
  EXPECT_EQ(injected.find("Bcc:"), std::string::npos);
  EXPECT_EQ(DecodeWords(injected), "hi\r\nBcc: eve@evil.test");
}

TEST(MailMessageBuilder, TextOnlyIsOneBase64Utf8Part) {
  MailMessage m = Sample();
  m.text = "数据已导出";
  const std::string bytes = BuildMimeMessage(m);
  EXPECT_NE(bytes.find("From: exports@example.com\r\n"), std::string::npos);
  EXPECT_NE(bytes.find("To: alice@example.com,\r\n bob@example.com\r\n"), std::string::npos);
  EXPECT_NE(bytes.find("Subject: Weekly orders\r\n"), std::string::npos);
  EXPECT_NE(bytes.find("Message-ID: <6e397850-c573-4b95@export-center>\r\n"), std::string::npos);
  EXPECT_NE(bytes.find("Date: Thu, 10 Dec 2026 11:00:00 +0000\r\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("MIME-Version: 1.0\r\n"), std::string::npos);
  EXPECT_NE(bytes.find("Content-Type: text/plain; charset=UTF-8\r\n"), std::string::npos);
  EXPECT_EQ(bytes.find("multipart"), std::string::npos);
  const size_t body = bytes.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos);
  std::string b64 = bytes.substr(body + 4);
  EXPECT_EQ(Base64Decode(b64.substr(0, b64.size() - 2)).value_or(""), "数据已导出");
  for (char c : bytes) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << "7-bit on the wire";
}

TEST(MailMessageBuilder, AttachmentIsMultipartMixedInBase64LinesOf76) {
  MailMessage m = Sample();
  m.html = "<p>Hello</p>";
  std::string data;
  for (int i = 0; i < 5000; ++i) data += static_cast<char>(i * 7 % 256);
  m.attachment = MailAttachment{"orders.xlsx", "application/vnd.ms-excel", data};
  const std::string bytes = BuildMimeMessage(m);
  EXPECT_NE(bytes.find("Content-Type: multipart/mixed; boundary=\""), std::string::npos);
  EXPECT_NE(bytes.find("Content-Type: multipart/alternative; boundary=\""), std::string::npos);
  EXPECT_NE(bytes.find("Content-Type: text/html; charset=UTF-8"), std::string::npos);
  EXPECT_NE(bytes.find("Content-Disposition: attachment; filename=\"orders.xlsx\""),
            std::string::npos);
  const std::string marker = "Content-Transfer-Encoding: base64\r\n\r\n";
  const size_t start = bytes.rfind(marker) + marker.size();
  const size_t end = bytes.find("--=_mixed_", start);
  ASSERT_NE(end, std::string::npos);
  std::string joined;
  for (const std::string& line : Lines(bytes.substr(start, end - start))) {
    EXPECT_LE(line.size(), 76u);
    joined += line;
  }
  EXPECT_EQ(Base64Decode(joined).value_or(""), data);
  EXPECT_EQ(bytes.substr(bytes.size() - 2), "\r\n");
  // The same row builds the same bytes: a retry sends the same message.
  EXPECT_EQ(BuildMimeMessage(m), bytes);
}

TEST(MailMessageBuilder, ANonAsciiFileNameIsEncodedAndQuotesAreDropped) {
  MailMessage m = Sample();
  m.attachment = MailAttachment{"客户\"列表\".xlsx", "", "x"};
  const std::string bytes = BuildMimeMessage(m);
  EXPECT_NE(bytes.find("Content-Type: application/octet-stream; name=\"=?UTF-8?B?"),
            std::string::npos);
  EXPECT_NE(bytes.find("filename=\"=?UTF-8?B?" + Base64Encode("客户列表.xlsx") + "?=\""),
            std::string::npos)
      << bytes;
}

TEST(MailMessageBuilder, AnUnsubscribeUrlBecomesTheOneClickHeadersInTheMessageHeader) {
  MailMessage m = Sample();
  const std::string url =
      "https://center.example.com/subscriptions/42/unsubscribe?r=bob%40example.com&sig=AbC-_9";
  m.list_unsubscribe = url;
  const std::string bytes = BuildMimeMessage(m);
  const std::string expected = "Auto-Submitted: auto-generated\r\nList-Unsubscribe: <" + url +
                               ">\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n";
  EXPECT_NE(bytes.find(expected), std::string::npos) << bytes;
  // In the message's header, not in a part.
  EXPECT_LT(bytes.find("List-Unsubscribe:"), bytes.find("\r\n\r\n"));
  // Without one, neither header.
  EXPECT_EQ(BuildMimeMessage(Sample()).find("List-Unsubscribe"), std::string::npos);
}

TEST(MailMessageBuilder, AnUnsubscribeUrlThatCouldInjectAHeaderIsLeftOut) {
  for (const std::string& bad : std::vector<std::string>{
           "https://x.example/u\r\nBcc: eve@evil.test", "https://x.example/u\nBcc: eve@evil.test",
           "https://x.example/u>, <mailto:eve@evil.test", "https://x.example/u v",
           "https://x.example/\xe8\xae\xa2", std::string(""),
           "https://x.example/" + std::string(kMaxListUnsubscribeBytes, 'a')}) {
    MailMessage m = Sample();
    m.list_unsubscribe = bad;
    const std::string bytes = BuildMimeMessage(m);
    EXPECT_EQ(bytes.find("List-Unsubscribe"), std::string::npos) << bad;
    EXPECT_EQ(bytes.find("Bcc:"), std::string::npos) << bad;
    EXPECT_FALSE(IsListUnsubscribeUrl(bad)) << bad;
  }
  EXPECT_TRUE(IsListUnsubscribeUrl("https://x.example/s/1/unsubscribe?r=a%40b.example&sig=x"));
}

TEST(MailRecipients, OnlyAllowedDomainsAndPlainAddressesPass) {
  MailOptions options;
  options.allowed_domains = {"example.com", "Corp.Example.CN"};
  options.max_recipients = 3;
  EXPECT_TRUE(CheckRecipients(options, {"a@example.com", "B@corp.example.cn"}).ok());
  Status outside = CheckRecipients(options, {"a@example.com", "bob@gmail.com"}, "delivery.emails");
  EXPECT_EQ(outside.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(outside.message(),
            "delivery.emails[1]: \"bob@gmail.com\" is outside the allowed domains (example.com, "
            "Corp.Example.CN)");
  EXPECT_FALSE(CheckRecipients(options, {"a@sub.example.com"}).ok()) << "exact domains only";
  EXPECT_FALSE(CheckRecipients(options, {"a@example.com.evil.test"}).ok());
  EXPECT_FALSE(CheckRecipients(options, {"a@evil.test@example.com"}).ok());
  EXPECT_FALSE(CheckRecipients(options, {"\"a b\"@example.com"}).ok());
  EXPECT_FALSE(CheckRecipients(options, {"a@example.com\r\nRCPT TO:<x@evil.test>"}).ok());
  EXPECT_FALSE(CheckRecipients(options, {"@example.com"}).ok());
  EXPECT_FALSE(CheckRecipients(options, {}).ok());
  Status many = CheckRecipients(
      options, {"a@example.com", "b@example.com", "c@example.com", "d@example.com"});
  EXPECT_NE(many.message().find("at most 3 (mail.max-recipients)"), std::string::npos);
  options.allowed_domains.clear();
  EXPECT_NE(CheckRecipients(options, {"a@example.com"}).message().find("none configured"),
            std::string::npos);
}

}  // namespace
}  // namespace export_center::notify::mail
