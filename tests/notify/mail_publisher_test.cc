// The mailer (notify/mail_publisher.h) over a real SQLite mail outbox, the
// libcurl sender and a real SMTP server (aiosmtpd with STARTTLS and AUTH,
// smtp_test_server.h). Back-offs pass by rewriting next_retry_at, never by
// sleeping; only the lease takeover waits for a real lease to run out.

#include "notify/mail_publisher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/encoding.h"
#include "notify/mail/curl_mail_sender.h"
#include "smtp_test_server.h"  // beside this file
#include "store/migrations.h"
#include "store/sql_mail_outbox.h"
#include "store/sqlite/sqlite_database.h"

namespace export_center::notify {
namespace {

using mail::MailOptions;
using testing::SmtpServerOptions;
using testing::SmtpTestServer;

class MailPublisherTest : public ::testing::Test, public MailObserver {
 protected:
  // The certificates once (RSA keys cost seconds on a busy machine).
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/ec-mailer-certs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    certs_ = new std::string(tmpl);
    ASSERT_TRUE(testing::MakeTestCertificates(*certs_));
  }
  static void TearDownTestSuite() {
    if (certs_ != nullptr) std::filesystem::remove_all(*certs_);
    delete certs_;
    certs_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(certs_, nullptr);
    char tmpl[] = "/tmp/ec-mailer-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    for (const char* name : {"ca.pem", "server.pem", "server.key"}) {
      std::filesystem::copy_file(*certs_ + "/" + name, dir_ + "/" + name);
    }
    auto db = store::OpenSqliteDatabase(dir_ + "/center.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    ASSERT_TRUE(store::Migrate(*db_).ok());
    outbox_ = store::NewSqlMailOutbox(db_);
  }
  void TearDown() override {
    server_.reset();
    outbox_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartServer(int tempfail = 0) {
    server_ = std::make_unique<SmtpTestServer>(
        dir_, SmtpServerOptions{true, "mailer", "s3cret-pass", tempfail});
    ASSERT_EQ(server_->Start(), "");
  }

  MailOptions Options() const {
    MailOptions o;
    o.enabled = true;
    o.host = "127.0.0.1";
    o.port = server_->port();
    o.ca_file = dir_ + "/ca.pem";
    o.username = "mailer";
    o.password = "s3cret-pass";
    o.from = "exports@example.com";
    o.allowed_domains = {"example.com"};
    o.max_attempts = 3;
    o.backoff_seconds = {60};
    o.timeout_ms = 10000;
    o.lease_seconds = 30;
    return o;
  }

  std::unique_ptr<mail::MailSender> Sender(const MailOptions& o) {
    auto sender = mail::NewCurlMailSender(o);
    EXPECT_TRUE(sender.ok()) << sender.status().ToString();
    return std::move(*sender);
  }

  AttachmentReader Files() {
    return [this](const std::string& key, int64_t max) -> StatusOr<std::string> {
      auto it = files_.find(key);
      if (it == files_.end()) return NotFound("object " + key + " not found");
      if (static_cast<int64_t>(it->second.size()) > max) return LimitExceeded("too large");
      return it->second;
    };
  }

  int64_t Enqueue(std::vector<std::string> to = {"alice@example.com"},
                  std::optional<std::string> attachment = std::nullopt) {
    store::NewMail m;
    m.subscription_id = 42;
    m.recipients = std::move(to);
    m.subject = "Weekly orders 周报";
    m.body_text = "Here it is.";
    if (attachment) {
      m.attachment_key = *attachment;
      m.attachment_name = "orders.csv";
      m.attachment_type = "text/csv";
    }
    auto e = outbox_->EnqueueMail(m);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? e->id : 0;
  }

  // Makes every pending mail due now (the back-off passed).
  void MakeDue() {
    ASSERT_TRUE(
        db_->Exec("UPDATE export_mail SET next_retry_at = 0 WHERE status = 'PENDING'").ok());
  }

  store::MailEntry Row(int64_t id) {
    auto e = outbox_->GetMail(id);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : store::MailEntry{};
  }

  void MailAttempted(MailResult r) override { results_[r]++; }

  static inline std::string* certs_ = nullptr;
  std::string dir_;
  std::shared_ptr<store::Database> db_;
  std::unique_ptr<store::MailOutbox> outbox_;
  std::unique_ptr<SmtpTestServer> server_;
  std::map<std::string, std::string> files_;
  std::map<MailResult, int> results_;
};

TEST_F(MailPublisherTest, AMailIsSentOnceWithItsAttachmentAndMarkedDelivered) {
  StartServer();
  std::string csv = "id,name\n1,张三\n";
  for (int i = 0; i < 2000; ++i) csv += std::to_string(i) + ",row\n";
  files_["exports/t1/orders.csv"] = csv;
  const int64_t id = Enqueue({"alice@example.com", "bob@EXAMPLE.com"}, "exports/t1/orders.csv");
  auto sender = Sender(Options());
  MailPublisher mailer(outbox_.get(), Options(), "a", sender.get(), Files(), this);
  EXPECT_EQ(mailer.DeliverDueOnce(), 1);
  EXPECT_EQ(mailer.DeliverDueOnce(), 0) << "a delivered row is never claimed again";
  auto got = server_->Received();
  ASSERT_EQ(got.size(), 1u);
  store::MailEntry row = Row(id);
  EXPECT_EQ(row.status, store::MailStatus::kDelivered);
  EXPECT_TRUE(row.delivered_at.has_value());
  EXPECT_EQ(got[0]["message"]["message_id"], row.message_id);
  EXPECT_EQ(got[0]["message"]["subject"], "Weekly orders 周报");
  EXPECT_EQ(got[0]["rcpt_tos"].size(), 2u);
  ASSERT_EQ(got[0]["message"]["attachments"].size(), 1u);
  EXPECT_EQ(got[0]["message"]["attachments"][0]["filename"], "orders.csv");
  EXPECT_EQ(Base64Decode(got[0]["message"]["attachments"][0]["data_b64"].get<std::string>()), csv);
  EXPECT_EQ(results_[MailResult::kDelivered], 1);
}

TEST_F(MailPublisherTest, A4xxIsRetriedWithBackoffThenDeadAfterMaxAttemptsAndRedeliveredOnce) {
  StartServer(/*tempfail=*/3);
  const int64_t id = Enqueue();
  auto sender = Sender(Options());
  MailPublisher mailer(outbox_.get(), Options(), "a", sender.get(), Files(), this);
  ASSERT_EQ(mailer.DeliverDueOnce(), 1);
  store::MailEntry row = Row(id);
  EXPECT_EQ(row.status, store::MailStatus::kPending);
  EXPECT_EQ(row.attempt_count, 1);
  EXPECT_NE(row.last_error.value_or("").find("temporary refusal (451)"), std::string::npos)
      << row.last_error.value_or("");
  EXPECT_EQ(mailer.DeliverDueOnce(), 0) << "not due before its back-off";
  MakeDue();
  ASSERT_EQ(mailer.DeliverDueOnce(), 1);
  EXPECT_EQ(Row(id).status, store::MailStatus::kPending);
  MakeDue();
  ASSERT_EQ(mailer.DeliverDueOnce(), 1);
  row = Row(id);
  EXPECT_EQ(row.status, store::MailStatus::kDead) << "max-attempts 3";
  EXPECT_EQ(row.attempt_count, 3);
  EXPECT_EQ(results_[MailResult::kFailed], 2);
  EXPECT_EQ(results_[MailResult::kDead], 1);
  MakeDue();
  EXPECT_EQ(mailer.DeliverDueOnce(), 0) << "a DEAD row is never sent by itself";
  EXPECT_TRUE(server_->Received().empty());
  auto dead = outbox_->ListDeadMails(10);
  ASSERT_TRUE(dead.ok());
  ASSERT_EQ(dead->size(), 1u);

  // The console's re-delivery: back to PENDING, sent once (the server accepts now).
  ASSERT_TRUE(outbox_->RedeliverMail(id).ok());
  EXPECT_EQ(outbox_->RedeliverMail(id).code(), StatusCode::kConflict) << "only a DEAD row";
  EXPECT_EQ(mailer.DeliverDueOnce(), 1);
  EXPECT_EQ(mailer.DeliverDueOnce(), 0);
  auto got = server_->Received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]["message"]["message_id"], row.message_id) << "the same message";
  EXPECT_EQ(Row(id).status, store::MailStatus::kDelivered);
}

TEST_F(MailPublisherTest, ARefusalForGoodIsDeadAtOnce) {
  StartServer();
  MailOptions o = Options();
  const int64_t outside = Enqueue({"alice@example.com"});
  const int64_t gone = Enqueue({"alice@example.com"}, "exports/missing.csv");
  o.allowed_domains = {"example.org"};  // the configuration changed since
  auto sender = Sender(o);
  MailPublisher mailer(outbox_.get(), o, "a", sender.get(), Files(), this);
  EXPECT_EQ(mailer.DeliverDueOnce(), 2);
  store::MailEntry row = Row(outside);
  EXPECT_EQ(row.status, store::MailStatus::kDead);
  EXPECT_EQ(row.attempt_count, 1);
  EXPECT_NE(row.last_error.value_or("").find("is outside the allowed domains (example.org)"),
            std::string::npos);
  EXPECT_EQ(Row(gone).status, store::MailStatus::kDead);
  EXPECT_TRUE(server_->Received().empty());
}

// Instance "a" claims, then stalls past its lease before sending; "b" takes
// the row over and sends it. "a" then finds its deadline gone and sends
// nothing, and its late mark changes nothing: one mail at the server.
class StallingSender : public mail::MailSender {
 public:
  StallingSender(mail::MailSender* inner, std::chrono::milliseconds stall)
      : inner_(inner), stall_(stall) {}
  Status Send(const mail::MailMessage& m, std::chrono::steady_clock::time_point deadline) override {
    entered_ = true;
    std::this_thread::sleep_for(stall_);
    return inner_->Send(m, deadline);
  }
  std::atomic<bool> entered_{false};

 private:
  mail::MailSender* inner_;
  std::chrono::milliseconds stall_;
};

TEST_F(MailPublisherTest, ALeaseTakenOverByAnotherInstanceNeverSendsTwice) {
  StartServer();
  const int64_t id = Enqueue();
  MailOptions o = Options();
  o.lease_seconds = 4;  // a send's deadline: 3 s after the claim
  auto real = Sender(o);
  StallingSender stalls(real.get(), std::chrono::milliseconds(5500));
  MailPublisher a(outbox_.get(), o, "a", &stalls, Files(), this);
  MailPublisher b(outbox_.get(), o, "b", real.get(), Files(), this);
  std::thread a_round([&] { EXPECT_EQ(a.DeliverDueOnce(), 1); });
  while (!stalls.entered_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(b.DeliverDueOnce(), 0) << "a holds the lease";
  std::this_thread::sleep_for(std::chrono::milliseconds(4300));  // a's lease ran out
  EXPECT_EQ(b.DeliverDueOnce(), 1);
  EXPECT_EQ(Row(id).status, store::MailStatus::kDelivered);
  a_round.join();
  EXPECT_EQ(server_->Received().size(), 1u) << "sent once";
  store::MailEntry row = Row(id);
  EXPECT_EQ(row.status, store::MailStatus::kDelivered) << "a's late mark changed nothing";
  EXPECT_EQ(row.attempt_count, 2);
}

}  // namespace
}  // namespace export_center::notify
