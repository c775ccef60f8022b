// The delivery duty (subscription/delivery.h) over a real SQLite store: the
// mail rows a finished run writes — subject, period, the signed links handed
// in by the signer, the attachment decision — and that a round repeated after
// a crash (the mails written, the run not yet marked) writes each mail once.
// The SMTP side and the links followed over HTTP are the integration test's
// (tests/integration/subscription_mail_test.py).

#include "subscription/delivery.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/migrations.h"
#include "store/sql_subscription_ledger.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"

namespace export_center::subscription {
namespace {

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    const Status _s = (expr);                               \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.ToString(); \
  } while (0)

constexpr int64_t kSlot = 1'709'514'000'000;  // 2024-03-04 01:00 UTC, 09:00 in Shanghai

class DeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("ec-delivery-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    auto db = store::OpenSqliteDatabase(path_.string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_OK(store::Migrate(*db_));
    store_ = store::NewSqlTaskStore(db_);
    ledger_ = store::NewSqlSubscriptionLedger(db_);
  }
  void TearDown() override {
    store_.reset();
    ledger_.reset();
    db_.reset();
    std::filesystem::remove(path_);
  }

  // A SUCCEEDED task of `rows` rows and `size` bytes covering last week.
  int64_t Task(int64_t rows, int64_t size) {
    const int64_t id = 500 + static_cast<int64_t>(tasks_++);
    Status made =
        db_->Exec(
               "INSERT INTO export_task (id, tenant_id, app_code, requested_by,"
               " export_type, task_name, format, parameters_json, params_hash, status,"
               " file_name, object_key, content_type, size_bytes, total_rows,"
               " next_retry_at, requested_at, updated_at) VALUES (?, 't1', 'PLATFORM',"
               " 'alice', 'CUSTOMER_LIST', 'Weekly customers', 'XLSX', ?, ?, 'SUCCEEDED',"
               " 'Weekly customers.xlsx', ?, 'application/vnd.ms-excel', ?, ?, 0, 0, 0)",
               {id, R"({"from":"2024-02-26","to":"2024-03-03","status":"ACTIVE"})",
                "h" + std::to_string(id), "t1/" + std::to_string(id) + ".xlsx", size, rows})
            .status();
    EXPECT_TRUE(made.ok()) << made.ToString();
    return id;
  }

  // A subscription in `locale` whose run at kSlot created `task_id` (or,
  // with `failed`, failed with that detail before making a task).
  int64_t Subscription(const std::string& delivery, int64_t task_id, const std::string& locale = "",
                       const std::string& failed = "") {
    store::NewSubscription spec;
    spec.tenant_id = "t1";
    spec.app_code = "PLATFORM";
    spec.owner = "alice";
    spec.export_type = "CUSTOMER_LIST";
    spec.format = "XLSX";
    spec.task_name = "Weekly customers";
    spec.parameters_json = "{}";
    spec.cron = "0 9 * * MON";
    spec.time_zone = "Asia/Shanghai";
    spec.delivery_json = delivery;
    spec.locale = locale;
    spec.first_slot_at = 1;
    auto made = ledger_->CreateSubscription(spec, store::SubscriptionCaps{});
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    const int64_t id = made.ok() ? made->id : 0;
    auto claimed = ledger_->ClaimSlot(id, kSlot, std::nullopt, "center-a", 60000);
    EXPECT_TRUE(claimed.ok() && claimed->has_value());
    EXPECT_TRUE(
        (failed.empty()
             ? ledger_->FinishRun(id, kSlot, "center-a", store::RunOutcome::kCreated, task_id, "")
             : ledger_->FinishRun(id, kSlot, "center-a", store::RunOutcome::kFailed, std::nullopt,
                                  failed))
            .ok());
    return id;
  }

  std::unique_ptr<SubscriptionDelivery> Duty(DeliveryOptions options = {}) {
    DeliveryLinks links;
    links.download = [this](const task::Task& t, int64_t expires_at_ms) -> StatusOr<std::string> {
      if (!link_error_.empty()) return NotFound(link_error_);
      return "https://center.example.com/downloads/task-" + std::to_string(t.id) + "-until-" +
             std::to_string(expires_at_ms);
    };
    links.unsubscribe = [](int64_t id, const std::string& recipient) {
      return "https://center.example.com/subscriptions/" + std::to_string(id) +
             "/unsubscribe?r=" + recipient;
    };
    links.now_ms = [] { return int64_t{1'709'600'000'000}; };
    return std::make_unique<SubscriptionDelivery>(&store_->run_deliveries(), store_.get(),
                                                  &store_->mails(), std::move(links), options);
  }

  std::vector<store::MailEntry> Mails() {
    std::vector<store::MailEntry> out;
    auto rows = db_->Query("SELECT id FROM export_mail ORDER BY id");
    EXPECT_TRUE(rows.ok());
    for (const store::Row& r : *rows) out.push_back(*store_->mails().GetMail(r.Int(0)));
    return out;
  }

  std::filesystem::path path_;
  std::shared_ptr<store::Database> db_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<store::SubscriptionLedger> ledger_;
  std::string link_error_;
  int tasks_ = 0;
};

TEST_F(DeliveryTest, EachRecipientGetsTheExportItsPeriodTheLinkAndTheirOwnUnsubscribeLink) {
  const int64_t task = Task(120, 2048);
  const int64_t id =
      Subscription(R"({"emails":["bob@example.com","Carol@example.com"],"attach":true})", task);
  auto figures = Duty()->RunRound();
  ASSERT_TRUE(figures.ok()) << figures.status().ToString();
  EXPECT_EQ(figures->mailed, 1);
  EXPECT_EQ(figures->mails, 2);
  const std::vector<store::MailEntry> mails = Mails();
  ASSERT_EQ(mails.size(), 2u);
  for (const store::MailEntry& m : mails) {
    EXPECT_EQ(m.mail.subject, "[Export Center] Weekly customers — 2024-02-26 to 2024-03-03");
    EXPECT_EQ(m.mail.subscription_id, id);
    EXPECT_EQ(m.mail.task_id, task);
    EXPECT_NE(m.mail.body_text.find("ran at 2024-03-04 09:00 Asia/Shanghai"), std::string::npos)
        << m.mail.body_text;
    EXPECT_NE(m.mail.body_text.find("Rows: 120\nFile: Weekly customers.xlsx (2.0 KB)"),
              std::string::npos)
        << m.mail.body_text;
    // The link works for the configured 72 h from the signer's now.
    EXPECT_NE(m.mail.body_text.find("https://center.example.com/downloads/task-" +
                                    std::to_string(task) + "-until-1709859200000"),
              std::string::npos)
        << m.mail.body_text;
    EXPECT_NE(m.mail.body_text.find("The file is attached."), std::string::npos);
    EXPECT_EQ(m.mail.attachment_key, "t1/" + std::to_string(task) + ".xlsx");
    EXPECT_EQ(m.mail.attachment_name, "Weekly customers.xlsx");
    ASSERT_EQ(m.mail.recipients.size(), 1u);
    const std::string unsubscribe = "https://center.example.com/subscriptions/" +
                                    std::to_string(id) + "/unsubscribe?r=" + m.mail.recipients[0];
    EXPECT_NE(m.mail.body_text.find("To stop receiving it: " + unsubscribe + "\n"),
              std::string::npos);
    // The same link is the mail's one-click List-Unsubscribe (RFC 8058).
    EXPECT_EQ(m.mail.list_unsubscribe, unsubscribe);
    EXPECT_EQ(m.message_id.rfind(
                  "<sub." + std::to_string(id) + "." + std::to_string(kSlot) + ".file.", 0),
              0u)
        << m.message_id;
  }
  EXPECT_NE(mails[0].message_id, mails[1].message_id);
  auto recorded = store_->run_deliveries().GetRunDelivery(id, kSlot);
  ASSERT_TRUE(recorded.ok());
  EXPECT_EQ(recorded->delivery, store::RunDelivery::kMailed);
  EXPECT_EQ(recorded->detail, "mailed to 2 recipient(s), attached");
  // Nothing is due any more.
  EXPECT_EQ(Duty()->RunRound()->mails, 0);
}

TEST_F(DeliveryTest, ARoundRepeatedAfterACrashWritesEachMailOnce) {
  const int64_t id =
      Subscription(R"({"emails":["bob@example.com","eve@example.com"]})", Task(10, 100));
  ASSERT_TRUE(Duty()->RunRound().ok());
  ASSERT_EQ(Mails().size(), 2u);
  // The process died after writing the mails, before marking the run.
  ASSERT_TRUE(db_->Exec("UPDATE export_subscription_run SET delivery = NULL").ok());
  // Another instance delivers it again: same Message-IDs, no new rows.
  auto again = Duty()->RunRound();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->mailed, 1);
  EXPECT_EQ(Mails().size(), 2u);
  EXPECT_EQ(store_->run_deliveries().GetRunDelivery(id, kSlot)->delivery,
            store::RunDelivery::kMailed);
}

TEST_F(DeliveryTest, OverTheCapOrWithAttachmentsOffTheMailSaysWhyItCarriesNoFile) {
  DeliveryOptions options;
  options.attachment_max_bytes = 1000;
  Subscription(R"({"emails":["bob@example.com"],"attach":true})", Task(10, 15 * 1024 * 1024));
  ASSERT_TRUE(Duty(options)->RunRound().ok());
  options.attachments = false;
  Subscription(R"({"emails":["eve@example.com"],"attach":true})", Task(10, 100));
  ASSERT_TRUE(Duty(options)->RunRound().ok());
  const std::vector<store::MailEntry> mails = Mails();
  ASSERT_EQ(mails.size(), 2u);
  EXPECT_FALSE(mails[0].mail.attachment_key.has_value());
  EXPECT_NE(mails[0].mail.body_text.find(
                "The file is not attached: it is 15.0 MB, over the 1000 bytes limit for"
                " attachments (mail.attachment-max-bytes). Use the link."),
            std::string::npos)
      << mails[0].mail.body_text;
  EXPECT_FALSE(mails[1].mail.attachment_key.has_value());
  EXPECT_NE(mails[1].mail.body_text.find("attachments are switched off here"), std::string::npos);
}

TEST_F(DeliveryTest, ALinkThatCannotBeSignedIsLeftOutAndTheMailSaysWhy) {
  link_error_ = "export type CUSTOMER_LIST is no longer registered; its file cannot be linked";
  Subscription(R"({"emails":["bob@example.com"]})", Task(10, 100));
  ASSERT_TRUE(Duty()->RunRound().ok());
  const std::vector<store::MailEntry> mails = Mails();
  ASSERT_EQ(mails.size(), 1u);
  EXPECT_NE(mails[0].mail.body_text.find("No download link: " + link_error_), std::string::npos);
  EXPECT_EQ(mails[0].mail.body_text.find("/downloads/"), std::string::npos);
}

TEST_F(DeliveryTest, AZhCnSubscriptionsMailIsWrittenInChineseEveryLineOfIt) {
  DeliveryOptions options;
  options.attachment_max_bytes = 1000;
  const int64_t task = Task(120, 15 * 1024 * 1024);
  const int64_t id = Subscription(R"({"emails":["bob@example.com"],"attach":true})", task, "zh-CN");
  ASSERT_TRUE(Duty(options)->RunRound().ok());
  const std::vector<store::MailEntry> mails = Mails();
  ASSERT_EQ(mails.size(), 1u);
  const store::NewMail& m = mails[0].mail;
  EXPECT_EQ(m.subject, "[导出中心] Weekly customers — 2024-02-26 至 2024-03-03");
  const std::string unsubscribe = "https://center.example.com/subscriptions/" + std::to_string(id) +
                                  "/unsubscribe?r=bob@example.com";
  const std::string expected =
      "你的订阅“Weekly customers”（CUSTOMER_LIST，XLSX）已于 2024-03-04 09:00 Asia/Shanghai "
      "运行。\n\n时间范围：2024-02-26 至 2024-03-03\n行数：120\n"
      "文件：Weekly customers.xlsx（15.0 MB）\n\n"
      "下载（链接有效期至 2024-03-08T00:53:20.000Z）：\n"
      "https://center.example.com/downloads/task-" +
      std::to_string(task) +
      "-until-1709859200000\n\n"
      "文件未附上：文件大小为 15.0 MB，超过附件上限 1000 字节（mail.attachment-max-bytes）。"
      "请使用上面的链接下载。\n\n"
      "文件也在你的下载中心（任务 " +
      std::to_string(task) +
      "）。\n"
      "\n--\n你收到这封邮件，是因为你是导出中心里 alice 的订阅 " +
      std::to_string(id) + " 的收件人。\n如不想再收到，请打开以下链接退订：\n" + unsubscribe + "\n";
  EXPECT_EQ(m.body_text, expected);
  EXPECT_EQ(m.list_unsubscribe, unsubscribe);
  // What is recorded for the operators stays as it was.
  EXPECT_EQ(store_->run_deliveries().GetRunDelivery(id, kSlot)->detail,
            "mailed to 1 recipient(s), not attached");
}

TEST_F(DeliveryTest, AFailureNoticeIsInTheSubscriptionsLanguageAndItsRecordInEnglish) {
  DeliveryOptions options;
  options.failure_grace_period_ms = 2 * 3600 * 1000;
  const int64_t zh =
      Subscription(R"({"emails":["bob@example.com"]})", 0, "zh-CN", "the provider answered 503");
  const int64_t en =
      Subscription(R"({"emails":["eve@example.com"]})", 0, "", "the provider answered 503");
  ASSERT_TRUE(Duty(options)->RunRound().ok());
  const std::vector<store::MailEntry> mails = Mails();
  ASSERT_EQ(mails.size(), 2u);
  for (const store::MailEntry& e : mails) {
    const store::NewMail& m = e.mail;
    if (m.subscription_id == zh) {
      EXPECT_EQ(m.subject,
                "[导出中心] 失败：Weekly customers — 2024-03-04 09:00 Asia/Shanghai 的运行");
      EXPECT_EQ(m.body_text.substr(0, m.body_text.find("\n--\n")),
                "你的订阅“Weekly customers”（CUSTOMER_LIST）在 2024-03-04 09:00 Asia/Shanghai "
                "的运行没有产出文件：运行失败：the provider answered 503。\n\n"
                "订阅的运行记录在下载中心。2 小时内再次失败不再发邮件；连续失败多次后，"
                "订阅会自动暂停。\n");
      EXPECT_NE(m.body_text.find("请打开以下链接退订：\nhttps://"), std::string::npos);
    } else {
      EXPECT_EQ(m.subscription_id, en);
      EXPECT_EQ(m.subject,
                "[Export Center] Failed: Weekly customers — run of 2024-03-04 09:00 "
                "Asia/Shanghai");
      EXPECT_NE(m.body_text.find("did not deliver a file: the run failed: the provider answered "
                                 "503.\n\nThe run history"),
                std::string::npos)
          << m.body_text;
      EXPECT_NE(m.body_text.find("Further failures within 2 h are not mailed"), std::string::npos);
    }
    EXPECT_TRUE(m.list_unsubscribe.has_value());
  }
  EXPECT_EQ(store_->run_deliveries().GetRunDelivery(zh, kSlot)->detail,
            "the run failed: the provider answered 503");
}

TEST_F(DeliveryTest, TheLanguageIsChosenByTheFilesRuleWithEnglishByDefault) {
  // The exact tag (any case), then the primary subtag; English otherwise.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"zh-CN", "[导出中心] "},      {"ZH-cn", "[导出中心] "},     {"zh", "[导出中心] "},
      {"zh-TW", "[导出中心] "},      {"fr", "[Export Center] "},   {"", "[Export Center] "},
      {"en-US", "[Export Center] "}, {"fr-FR", "[Export Center] "}};
  std::map<int64_t, std::string> want;
  for (const auto& [locale, prefix] : cases) {
    want[Subscription(R"({"emails":["bob@example.com"]})", Task(10, 100), locale)] = prefix;
  }
  ASSERT_TRUE(Duty()->RunRound().ok());
  const std::vector<store::MailEntry> mails = Mails();
  ASSERT_EQ(mails.size(), cases.size());
  for (const store::MailEntry& e : mails) {
    const std::string& prefix = want[e.mail.subscription_id.value_or(0)];
    EXPECT_EQ(e.mail.subject.rfind(prefix, 0), 0u) << e.mail.subject << " wanted " << prefix;
  }
}

}  // namespace
}  // namespace export_center::subscription
