// The MailOutbox contract (mail_outbox.h) on every backend: SQLite, and the
// real PostgreSQL and MariaDB servers the store's contract binary starts once
// (store_backends.h). Leases and back-offs pass by rewriting stored times,
// never by sleeping.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/mail_outbox.h"
#include "store/migrations.h"
#include "store/sql_mail_outbox.h"
#include "store_backends.h"  // beside this file

namespace export_center::store {
namespace {

class MailOutboxContractTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK(Migrate(*db_));
    outbox_ = NewSqlMailOutbox(db_);
  }

  static NewMail Mail() {
    NewMail m;
    m.subscription_id = 7;
    m.task_id = 385871725167902720;
    m.recipients = {"alice@example.com", "bob@example.com"};
    m.subject = "客户列表 — weekly 📦";
    m.body_text = "Grüße\nthe file is attached";
    m.body_html = "<p>Grüße</p>";
    m.attachment_key = "t1/2026/12/客户列表.xlsx";
    m.attachment_name = "客户列表.xlsx";
    m.attachment_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
    m.list_unsubscribe =
        "https://center.example.com/subscriptions/7/unsubscribe?r=alice%40example.com&sig=Zq-_0";
    return m;
  }

  int64_t Enqueue() {
    auto e = outbox_->EnqueueMail(Mail());
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? e->id : 0;
  }

  // Moves a row's lease or back-off into the past (the database clock passed).
  void Expire(int64_t id) {
    ASSERT_OK(db_->Exec("UPDATE export_mail SET lease_until = lease_until - 3600000,"
                        " next_retry_at = next_retry_at - 3600000 WHERE id = ?",
                        {id})
                  .status());
  }

  std::unique_ptr<MailOutbox> outbox_;
};

TEST_P(MailOutboxContractTest, EnqueuedMailsReadBackWithEveryFieldAndTheirOwnMessageId) {
  ASSERT_OK_AND_ASSIGN(MailEntry made, outbox_->EnqueueMail(Mail()));
  EXPECT_GT(made.id, 0);
  EXPECT_EQ(made.status, MailStatus::kPending);
  EXPECT_EQ(made.attempt_count, 0);
  EXPECT_EQ(made.message_id.front(), '<');
  EXPECT_NE(made.message_id.find("@export-center>"), std::string::npos);
  const NewMail m = Mail();
  EXPECT_EQ(made.mail.subscription_id, m.subscription_id);
  EXPECT_EQ(made.mail.task_id, m.task_id);
  EXPECT_EQ(made.mail.recipients, m.recipients);
  EXPECT_EQ(made.mail.subject, m.subject);
  EXPECT_EQ(made.mail.body_text, m.body_text);
  EXPECT_EQ(made.mail.body_html, m.body_html);
  EXPECT_EQ(made.mail.attachment_key, m.attachment_key);
  EXPECT_EQ(made.mail.attachment_name, m.attachment_name);
  EXPECT_EQ(made.mail.attachment_type, m.attachment_type);
  EXPECT_EQ(made.mail.list_unsubscribe, m.list_unsubscribe);
  // A claim reads it too (the mailer writes the headers from the claimed row).
  ASSERT_OK_AND_ASSIGN(std::optional<MailEntry> claimed,
                       outbox_->ClaimMail(made.id, "center-a", 60));
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->mail.list_unsubscribe, m.list_unsubscribe);

  NewMail bare;
  bare.recipients = {"carol@example.com"};
  bare.subject = "s";
  bare.body_text = "b";
  ASSERT_OK_AND_ASSIGN(MailEntry plain, outbox_->EnqueueMail(bare));
  EXPECT_FALSE(plain.mail.subscription_id.has_value());
  EXPECT_FALSE(plain.mail.body_html.has_value());
  EXPECT_FALSE(plain.mail.attachment_key.has_value());
  EXPECT_FALSE(plain.mail.list_unsubscribe.has_value());
  EXPECT_NE(plain.message_id, made.message_id);

  // No line break (or anything else that could end the header) is stored.
  for (const char* bad : {"https://x.example/u\r\nBcc: eve@evil.test", "https://x.example/u v",
                          "https://x.example/u>", ""}) {
    NewMail injected = bare;
    injected.list_unsubscribe = bad;
    EXPECT_EQ(outbox_->EnqueueMail(injected).status().code(), StatusCode::kInvalidArgument) << bad;
  }

  bare.recipients = {};
  EXPECT_EQ(outbox_->EnqueueMail(bare).status().code(), StatusCode::kInvalidArgument);
  bare.recipients = {"a@example.com,b@example.com"};
  EXPECT_EQ(outbox_->EnqueueMail(bare).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(outbox_->GetMail(12345).status().code(), StatusCode::kNotFound);
}

TEST_P(MailOutboxContractTest, AClaimIsExclusiveAndADeliveredRowIsNeverClaimedAgain) {
  const int64_t id = Enqueue();
  ASSERT_OK_AND_ASSIGN(auto due, outbox_->SelectDueMails(10));
  ASSERT_EQ(due, std::vector<int64_t>{id});
  ASSERT_OK_AND_ASSIGN(auto claimed, outbox_->ClaimMail(id, "a", 60));
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->status, MailStatus::kSending);
  EXPECT_EQ(claimed->attempt_count, 1);
  EXPECT_EQ(claimed->lease_owner, "a");
  ASSERT_OK_AND_ASSIGN(auto again, outbox_->ClaimMail(id, "b", 60));
  EXPECT_FALSE(again.has_value()) << "held by a";
  ASSERT_OK_AND_ASSIGN(due, outbox_->SelectDueMails(10));
  EXPECT_TRUE(due.empty());
  ASSERT_OK_AND_ASSIGN(MarkOutcome marked, outbox_->MarkMailDelivered(id, "a"));
  EXPECT_EQ(marked, MarkOutcome::kMarked);
  Expire(id);
  ASSERT_OK_AND_ASSIGN(due, outbox_->SelectDueMails(10));
  EXPECT_TRUE(due.empty()) << "DELIVERED is never due, whatever its old lease said";
  ASSERT_OK_AND_ASSIGN(again, outbox_->ClaimMail(id, "b", 60));
  EXPECT_FALSE(again.has_value());
  ASSERT_OK_AND_ASSIGN(MailEntry row, outbox_->GetMail(id));
  EXPECT_EQ(row.status, MailStatus::kDelivered);
  EXPECT_TRUE(row.delivered_at.has_value());
  EXPECT_FALSE(row.lease_owner.has_value());
}

TEST_P(MailOutboxContractTest, ALostLeaseIsTakenOverAndTheFirstInstancesMarkChangesNothing) {
  const int64_t id = Enqueue();
  ASSERT_OK_AND_ASSIGN(auto first, outbox_->ClaimMail(id, "a", 60));
  ASSERT_TRUE(first.has_value());
  Expire(id);  // a died or hung: its lease ran out
  ASSERT_OK_AND_ASSIGN(auto due, outbox_->SelectDueMails(10));
  ASSERT_EQ(due, std::vector<int64_t>{id});
  ASSERT_OK_AND_ASSIGN(auto taken, outbox_->ClaimMail(id, "b", 60));
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->attempt_count, 2);
  EXPECT_EQ(taken->message_id, first->message_id) << "the same message";
  ASSERT_OK_AND_ASSIGN(MarkOutcome late, outbox_->MarkMailDelivered(id, "a"));
  EXPECT_EQ(late, MarkOutcome::kClaimLost) << "a's send ended after its lease: not recorded";
  ASSERT_OK_AND_ASSIGN(MarkOutcome late_retry, outbox_->MarkMailRetry(id, "a", "x", 1000));
  EXPECT_EQ(late_retry, MarkOutcome::kClaimLost);
  ASSERT_OK_AND_ASSIGN(MarkOutcome late_dead, outbox_->MarkMailDead(id, "a", "x"));
  EXPECT_EQ(late_dead, MarkOutcome::kClaimLost);
  ASSERT_OK_AND_ASSIGN(MarkOutcome mine, outbox_->MarkMailDelivered(id, "b"));
  EXPECT_EQ(mine, MarkOutcome::kMarked);
}

TEST_P(MailOutboxContractTest, ARetryWaitsForItsBackoffAndDeadIsRedeliveredOnce) {
  const int64_t id = Enqueue();
  ASSERT_OK_AND_ASSIGN(auto claimed, outbox_->ClaimMail(id, "a", 60));
  ASSERT_TRUE(claimed.has_value());
  const std::string long_error = "451 " + std::string(3000, 'x') + " 服务";
  ASSERT_OK_AND_ASSIGN(MarkOutcome retry, outbox_->MarkMailRetry(id, "a", long_error, 60000));
  EXPECT_EQ(retry, MarkOutcome::kMarked);
  ASSERT_OK_AND_ASSIGN(MailEntry row, outbox_->GetMail(id));
  EXPECT_EQ(row.status, MailStatus::kPending);
  EXPECT_LE(row.last_error->size(), 1000u) << "an excerpt";
  ASSERT_OK_AND_ASSIGN(auto due, outbox_->SelectDueMails(10));
  EXPECT_TRUE(due.empty()) << "not before its back-off";
  Expire(id);
  ASSERT_OK_AND_ASSIGN(claimed, outbox_->ClaimMail(id, "a", 60));
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->attempt_count, 2);

  EXPECT_EQ(outbox_->RedeliverMail(id).code(), StatusCode::kConflict) << "SENDING is not DEAD";
  ASSERT_OK_AND_ASSIGN(MarkOutcome dead, outbox_->MarkMailDead(id, "a", "550 no such user"));
  EXPECT_EQ(dead, MarkOutcome::kMarked);
  Expire(id);
  ASSERT_OK_AND_ASSIGN(due, outbox_->SelectDueMails(10));
  EXPECT_TRUE(due.empty()) << "DEAD is never due";
  ASSERT_OK_AND_ASSIGN(auto listed, outbox_->ListDeadMails(10));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].last_error, "550 no such user");

  ASSERT_OK(outbox_->RedeliverMail(id));
  EXPECT_EQ(outbox_->RedeliverMail(id).code(), StatusCode::kConflict) << "once";
  EXPECT_EQ(outbox_->RedeliverMail(987654321).code(), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(row, outbox_->GetMail(id));
  EXPECT_EQ(row.status, MailStatus::kPending);
  EXPECT_EQ(row.attempt_count, 0) << "attempts reset";
  ASSERT_OK_AND_ASSIGN(due, outbox_->SelectDueMails(10));
  EXPECT_EQ(due, std::vector<int64_t>{id}) << "due at once";
  ASSERT_OK_AND_ASSIGN(listed, outbox_->ListDeadMails(10));
  EXPECT_TRUE(listed.empty());
}

TEST_P(MailOutboxContractTest, ThreeInstancesRacingClaimEachRowOnce) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 12; ++i) ids.push_back(Enqueue());
  std::atomic<int> claims{0};
  std::map<int64_t, int> per_row;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (const std::string instance : {"a", "b", "c"}) {
    threads.emplace_back([&, instance] {
      for (int64_t id : ids) {
        auto got = outbox_->ClaimMail(id, instance, 60);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        if (!got->has_value()) continue;
        ++claims;
        std::lock_guard lock(mu);
        per_row[id]++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(claims.load(), 12);
  for (int64_t id : ids) EXPECT_EQ(per_row[id], 1) << id;
}

TEST_P(MailOutboxContractTest, DeliveredRowsArePurgedAfterTheRetentionAndDeadOnesStay) {
  const int64_t delivered = Enqueue();
  const int64_t dead = Enqueue();
  for (int64_t id : {delivered, dead}) {
    ASSERT_OK_AND_ASSIGN(auto c, outbox_->ClaimMail(id, "a", 60));
    ASSERT_TRUE(c.has_value());
  }
  ASSERT_OK(outbox_->MarkMailDelivered(delivered, "a").status());
  ASSERT_OK(outbox_->MarkMailDead(dead, "a", "gone").status());
  ASSERT_OK_AND_ASSIGN(int none, outbox_->PurgeDeliveredMails(3600, 10));
  EXPECT_EQ(none, 0) << "delivered just now";
  ASSERT_OK(db_->Exec("UPDATE export_mail SET delivered_at = 5, updated_at = 5").status());
  ASSERT_OK_AND_ASSIGN(int purged, outbox_->PurgeDeliveredMails(3600, 10));
  EXPECT_EQ(purged, 1);
  EXPECT_EQ(outbox_->GetMail(delivered).status().code(), StatusCode::kNotFound);
  ASSERT_OK(outbox_->GetMail(dead).status());
}

TEST_P(MailOutboxContractTest, AGivenMessageIdIsWrittenOnceHoweverOftenAndByWhomeverItIsEnqueued) {
  NewMail m = Mail();
  m.message_id = "<sub.7.1770000000000.file.0123456789abcdef@export-center>";
  ASSERT_OK_AND_ASSIGN(MailEntry first, outbox_->EnqueueMail(m));
  EXPECT_EQ(first.message_id, m.message_id);
  m.subject = "a repeat that must not be a second mail";
  ASSERT_OK_AND_ASSIGN(MailEntry again, outbox_->EnqueueMail(m));
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(again.mail.subject, first.mail.subject);
  // Three instances racing to write the same mail: one row.
  m.message_id = "<sub.7.1770000000000.file.fedcba9876543210@export-center>";
  std::vector<std::unique_ptr<MailOutbox>> fleet;
  for (int i = 0; i < 3; ++i) fleet.push_back(NewSqlMailOutbox(db_));
  std::vector<int64_t> ids(3, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      auto e = fleet[i]->EnqueueMail(m);
      if (e.ok()) ids[i] = e->id;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_NE(ids[0], 0);
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_EQ(ids[1], ids[2]);
  ASSERT_OK_AND_ASSIGN(
      Rows rows,
      db_->Query("SELECT COUNT(*) FROM export_mail WHERE message_id = ?", {m.message_id}));
  EXPECT_EQ(rows.at(0).Int(0), 1);
  m.message_id = "no-angle-brackets@export-center";
  EXPECT_EQ(outbox_->EnqueueMail(m).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(MailOutboxContractTest, TheDeadListAndRedeliveryKeepToTheOperatorsScope) {
  // Two subscriptions of two tenants, a dead mail each.
  for (auto [id, tenant] : {std::pair<int64_t, const char*>{7, "t1"}, {8, "t2"}}) {
    ASSERT_OK(db_->Exec("INSERT INTO export_subscription (id, tenant_id, app_code, owner,"
                        " export_type, format, task_name, parameters_json, cron, time_zone,"
                        " business_days_only, delivery_json, state, consecutive_failures, version,"
                        " created_at, updated_at) VALUES (?, ?, 'PLATFORM', 'alice', 'T', 'XLSX',"
                        " 'n', '{}', '0 9 * * *', 'UTC', 0, '{}', 'ACTIVE', 0, 1, 0, 0)",
                        {id, std::string(tenant)})
                  .status());
  }
  std::map<int64_t, int64_t> mail_of;
  for (int64_t sub : {7, 8}) {
    NewMail m = Mail();
    m.subscription_id = sub;
    ASSERT_OK_AND_ASSIGN(MailEntry e, outbox_->EnqueueMail(m));
    ASSERT_TRUE(outbox_->ClaimMail(e.id, "center-a", 60)->has_value());
    ASSERT_OK(outbox_->MarkMailDead(e.id, "center-a", "550 no such user").status());
    mail_of[sub] = e.id;
  }
  const MailScope t1{std::string("t1"), std::string("PLATFORM")};
  ASSERT_OK_AND_ASSIGN(std::vector<MailEntry> all, outbox_->ListDeadMails(10));
  EXPECT_EQ(all.size(), 2u);
  ASSERT_OK_AND_ASSIGN(std::vector<MailEntry> mine, outbox_->ListDeadMails(10, t1));
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].id, mail_of[7]);
  const MailScope other_app{std::string("t1"), std::string("MERCHANT")};
  EXPECT_TRUE(outbox_->ListDeadMails(10, other_app)->empty());
  // Another tenant's mail answers like a missing one, and stays DEAD.
  EXPECT_EQ(outbox_->RedeliverMail(mail_of[8], t1).code(), StatusCode::kNotFound);
  EXPECT_EQ(outbox_->GetMail(mail_of[8])->status, MailStatus::kDead);
  ASSERT_OK(outbox_->RedeliverMail(mail_of[7], t1));
  EXPECT_EQ(outbox_->GetMail(mail_of[7])->status, MailStatus::kPending);
  EXPECT_EQ(outbox_->RedeliverMail(mail_of[7], t1).code(), StatusCode::kConflict);
}

// The console's dead list and the purge read a long table of finished rows in
// the order of an index of migration 21 — never the whole table, never a sort
// — on each backend's own plan, over 6 000 ANALYZEd rows.
TEST_P(MailOutboxContractTest, TheDeadListAndThePurgeReadInTheOrderOfAnIndex) {
  const char* statuses[] = {"DELIVERED", "DELIVERED", "DELIVERED", "DEAD", "PENDING"};
  constexpr int kRows = 6000;
  constexpr int kBatch = 200;
  for (int first = 0; first < kRows; first += kBatch) {
    std::string sql =
        "INSERT INTO export_mail (id, message_id, recipients, subject, body_text, status,"
        " attempt_count, next_retry_at, delivered_at, created_at, updated_at) VALUES ";
    SqlParams params;
    for (int i = first; i < first + kBatch; ++i) {
      const std::string status = statuses[i % 5];
      const int64_t at = 1'700'000'000'000 + int64_t{i} * 1000;
      sql += std::string(i == first ? "" : ", ") +
             "(?, ?, 'a@example.com', 's', 'b', ?, 1, 0, ?, ?, ?)";
      params.insert(params.end(),
                    {int64_t{1'000'000} + i, "<plan-" + std::to_string(i) + "@x>", status,
                     status == "DELIVERED" ? SqlValue(at) : SqlValue(), at, at});
    }
    ASSERT_OK(db_->Exec(sql, params).status());
  }
  const std::string& kind = db_->dialect().name;
  ASSERT_OK(
      db_->Exec(kind == "mysql" ? "ANALYZE TABLE export_mail" : "ANALYZE export_mail").status());
  for (const MailPlanStatement& s : MailOutboxPlanStatements()) {
    const std::string sql = db_->dialect().Expand(s.sql);
    std::string plan;
    if (kind == "sqlite") {
      ASSERT_OK_AND_ASSIGN(Rows rows, db_->Query("EXPLAIN QUERY PLAN " + sql, s.params));
      for (const Row& r : rows) plan += r.Text(3) + "\n";
    } else {
      ASSERT_OK_AND_ASSIGN(
          Rows rows,
          db_->Query((kind == "postgres" ? "EXPLAIN (FORMAT JSON) " : "EXPLAIN FORMAT=JSON ") + sql,
                     s.params));
      for (const Row& r : rows) plan += r.Text(0);
    }
    const std::string index =
        s.name == "dead list" ? "idx_export_mail_dead" : "idx_export_mail_delivered";
    EXPECT_NE(plan.find(index), std::string::npos) << s.name << " does not use " << index << ":\n"
                                                   << plan;
    for (const char* sort : {"TEMP B-TREE", "\"Sort\"", "filesort\": true", "\"filesort\":"}) {
      EXPECT_EQ(plan.find(sort), std::string::npos) << s.name << " sorts:\n" << plan;
    }
    ASSERT_OK(db_->Query(sql, s.params).status());  // and it runs
  }
}

EC_INSTANTIATE_ON_EVERY_BACKEND(MailOutboxContractTest);

}  // namespace
}  // namespace export_center::store
