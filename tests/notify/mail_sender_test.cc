// The libcurl MailSender against a real SMTP server (aiosmtpd,
// smtp_test_server.h): STARTTLS under a CA made at test time, AUTH required.
// What arrived is read by Python's email package on the server's side.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "common/encoding.h"
#include "notify/mail/curl_mail_sender.h"
#include "smtp_test_server.h"  // beside this file

namespace export_center::notify::mail {
namespace {

using Clock = std::chrono::steady_clock;
using testing::SmtpServerOptions;
using testing::SmtpTestServer;

class MailSenderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/ec-mail-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = new std::string(tmpl);
    ASSERT_TRUE(testing::MakeTestCertificates(*dir_)) << "openssl could not make certificates";
    server_ = new SmtpTestServer(*dir_, SmtpServerOptions{});
    const std::string error = server_->Start();
    ASSERT_EQ(error, "");
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  static MailOptions Options(int port) {
    MailOptions o;
    o.enabled = true;
    o.host = "127.0.0.1";
    o.port = port;
    o.tls = MailTls::kStartTls;
    o.ca_file = *dir_ + "/ca.pem";
    o.username = "mailer";
    o.password = "s3cret-pass";
    o.from = "exports@example.com";
    o.allowed_domains = {"example.com"};
    o.connect_timeout_ms = 2000;
    o.timeout_ms = 10000;
    return o;
  }

  static std::unique_ptr<MailSender> Sender(const MailOptions& o) {
    auto sender = NewCurlMailSender(o);
    EXPECT_TRUE(sender.ok()) << sender.status().ToString();
    return sender.ok() ? std::move(*sender) : nullptr;
  }

  static MailMessage Message(const std::string& id) {
    MailMessage m;
    m.from = "exports@example.com";
    m.to = {"alice@example.com", "bob@example.com"};
    m.subject = "每周订单 — weekly orders";
    m.text = "Your export is attached.\n附件是导出的文件。";
    m.message_id = "<" + id + "@export-center>";
    m.date_ms = 1796900400000;
    return m;
  }

  static Clock::time_point In(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

  static inline std::string* dir_ = nullptr;
  static inline SmtpTestServer* server_ = nullptr;
};

TEST_F(MailSenderTest, AMailWithAnAttachmentArrivesWithTheSameBytes) {
  MailMessage m = Message("attachment-1");
  std::string data;
  for (int i = 0; i < 300000; ++i) data += static_cast<char>((i * 131) % 256);
  m.attachment = MailAttachment{
      "orders.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", data};
  m.html = "<p>Your export is attached.</p>";
  const size_t before = server_->Received().size();
  ASSERT_TRUE(Sender(Options(server_->port()))->Send(m, In(10000)).ok());
  auto received = server_->Received();
  ASSERT_EQ(received.size(), before + 1);
  const auto& r = received.back();
  EXPECT_EQ(r["login"], "mailer") << "AUTH was used";
  EXPECT_EQ(r["mail_from"], "exports@example.com");
  EXPECT_EQ(r["rcpt_tos"], nlohmann::json::array({"alice@example.com", "bob@example.com"}));
  const auto& msg = r["message"];
  EXPECT_EQ(msg["subject"], "每周订单 — weekly orders");
  EXPECT_EQ(msg["message_id"], "<attachment-1@export-center>");
  EXPECT_EQ(msg["text"], "Your export is attached.\n附件是导出的文件。");
  EXPECT_EQ(msg["html"], "<p>Your export is attached.</p>");
  ASSERT_EQ(msg["attachments"].size(), 1u);
  EXPECT_EQ(msg["attachments"][0]["filename"], "orders.xlsx");
  EXPECT_EQ(msg["attachments"][0]["content_type"],
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
  EXPECT_EQ(Base64Decode(msg["attachments"][0]["data_b64"].get<std::string>()).value_or(""), data)
      << "the attachment's bytes";
}

TEST_F(MailSenderTest, AServerCertificateFromAnotherCaIsRefusedNamingTheCheck) {
  MailOptions o = Options(server_->port());
  o.ca_file = *dir_ + "/other-ca.pem";
  const size_t before = server_->Received().size();
  Status sent = Sender(o)->Send(Message("wrong-ca"), In(10000));
  EXPECT_EQ(sent.code(), StatusCode::kUnavailable) << sent.ToString();
  EXPECT_NE(sent.message().find("TLS certificate check failed"), std::string::npos)
      << sent.ToString();
  EXPECT_NE(sent.message().find("mail.ca-file " + *dir_ + "/other-ca.pem"), std::string::npos);
  EXPECT_EQ(server_->Received().size(), before);
}

TEST_F(MailSenderTest, AWrongPasswordIsUnauthenticated) {
  MailOptions o = Options(server_->port());
  o.password = "not-the-password";
  Status sent = Sender(o)->Send(Message("bad-auth"), In(10000));
  EXPECT_EQ(sent.code(), StatusCode::kUnauthenticated) << sent.ToString();
  EXPECT_NE(sent.message().find("AUTH refused for mail.username 'mailer'"), std::string::npos);
  EXPECT_EQ(sent.message().find("not-the-password"), std::string::npos) << "no password in logs";
}

TEST_F(MailSenderTest, AServerWithoutStartTlsIsRefusedNotUsedInClearText) {
  SmtpTestServer plain(*dir_, SmtpServerOptions{false, "", "", 0});
  ASSERT_EQ(plain.Start(), "");
  Status sent = Sender(Options(plain.port()))->Send(Message("no-starttls"), In(10000));
  EXPECT_EQ(sent.code(), StatusCode::kUnavailable) << sent.ToString();
  EXPECT_NE(sent.message().find("does not offer STARTTLS"), std::string::npos) << sent.ToString();
  EXPECT_TRUE(plain.Received().empty());
  // mail.tls none speaks to it (loopback only).
  MailOptions none = Options(plain.port());
  none.tls = MailTls::kNone;
  none.username.clear();
  ASSERT_TRUE(Sender(none)->Send(Message("plain"), In(10000)).ok());
  EXPECT_EQ(plain.Received().size(), 1u);
}

TEST_F(MailSenderTest, ClearTextIsOnlyForLoopback) {
  MailOptions o = Options(25);
  o.host = "mail.example.com";
  o.tls = MailTls::kNone;
  auto sender = NewCurlMailSender(o);
  ASSERT_FALSE(sender.ok());
  EXPECT_NE(sender.status().message().find("mail.tls: none is allowed only for a loopback host"),
            std::string::npos);
}

// A server that takes the connection and never says a word.
TEST_F(MailSenderTest, AServerThatHangsEndsAtTheDeadline) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 8), 0);  // the kernel completes the handshake; nobody answers
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  MailOptions o = Options(ntohs(addr.sin_port));
  const auto start = Clock::now();
  Status sent = Sender(o)->Send(Message("hang"), In(1500));
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  close(fd);
  EXPECT_EQ(sent.code(), StatusCode::kDeadlineExceeded) << sent.ToString();
  EXPECT_GE(took, 1300);
  EXPECT_LT(took, 4000);
  // A deadline already passed sends nothing at all.
  Status late = Sender(Options(server_->port()))->Send(Message("late"), In(-1));
  EXPECT_EQ(late.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(late.message().find("deadline had passed"), std::string::npos);
}

TEST_F(MailSenderTest, AMessageOverTheSizeCapIsRefusedBeforeConnecting) {
  MailOptions o = Options(server_->port());
  o.message_max_bytes = 10000;
  MailMessage m = Message("big");
  m.attachment = MailAttachment{"big.bin", "", std::string(20000, 'x')};
  Status sent = Sender(o)->Send(m, In(10000));
  EXPECT_EQ(sent.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(sent.message().find("more than mail.message-max-bytes (10000)"), std::string::npos);
}

}  // namespace
}  // namespace export_center::notify::mail
