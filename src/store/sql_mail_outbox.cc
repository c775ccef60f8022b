#include "store/sql_mail_outbox.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/utf8.h"
#include "store/id_node.h"
#include "store/leased_queue.h"

namespace export_center::store {

std::string_view ToString(MailStatus status) {
  switch (status) {
    case MailStatus::kPending:
      return "PENDING";
    case MailStatus::kSending:
      return "SENDING";
    case MailStatus::kDelivered:
      return "DELIVERED";
    case MailStatus::kDead:
      return "DEAD";
  }
  return "PENDING";
}

namespace {

constexpr char kColumns[] =
    "id, message_id, subscription_id, task_id, recipients, subject, body_text, body_html,"
    " attachment_key, attachment_name, attachment_type, status, attempt_count, next_retry_at,"
    " lease_owner, lease_until, delivered_at, last_error, created_at, list_unsubscribe";

// Due (and claimable): PENDING with its back-off passed, or SENDING by an
// instance whose lease ran out (it died or hung mid-send). A DELIVERED or
// DEAD row never is, so a lost lease never resends a delivered mail.
constexpr char kDue[] =
    "((status = 'PENDING' AND next_retry_at <= {NOW})"
    " OR (status = 'SENDING' AND lease_until <= {NOW}))";

constexpr size_t kMaxErrorBytes = 1000;

// The same check as notify/mail's builder (mail_message.h IsListUnsubscribeUrl;
// store/ does not depend on notify/): a header value no line break can break.
constexpr size_t kMaxListUnsubscribeBytes = 900;
bool IsListUnsubscribeValue(const std::string& url) {
  if (url.empty() || url.size() > kMaxListUnsubscribeBytes) return false;
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '<' || c == '>') return false;
  }
  return true;
}

// The console's dead list and the purge's pick (MailOutboxPlanStatements).
constexpr char kDeadWhere[] = "status = 'DEAD'";
constexpr char kDeadOrder[] = "updated_at DESC, id DESC";
constexpr char kPurgePick[] =
    "SELECT id FROM export_mail WHERE status = 'DELIVERED' AND delivered_at <= {NOW} - ?"
    " ORDER BY delivered_at, id LIMIT ?";

std::string JoinRecipients(const std::vector<std::string>& recipients) {
  std::string out;
  for (const std::string& r : recipients) {
    if (!out.empty()) out += ",";
    out += r;
  }
  return out;
}

std::vector<std::string> SplitRecipients(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

StatusOr<MailEntry> MailFromRow(const Row& r) {
  MailEntry e;
  e.id = r.Int(0);
  e.message_id = r.Text(1);
  e.mail.subscription_id = r.OptInt(2);
  e.mail.task_id = r.OptInt(3);
  e.mail.recipients = SplitRecipients(r.Text(4));
  e.mail.subject = r.Text(5);
  e.mail.body_text = r.Text(6);
  e.mail.body_html = r.OptText(7);
  e.mail.attachment_key = r.OptText(8);
  e.mail.attachment_name = r.OptText(9).value_or("");
  e.mail.attachment_type = r.OptText(10).value_or("");
  const std::string status = r.Text(11);
  bool known = false;
  for (MailStatus s :
       {MailStatus::kPending, MailStatus::kSending, MailStatus::kDelivered, MailStatus::kDead}) {
    if (ToString(s) == status) {
      e.status = s;
      known = true;
    }
  }
  if (!known) return Internal("export_mail " + std::to_string(e.id) + " has an unknown status");
  e.attempt_count = static_cast<int32_t>(r.Int(12));
  e.next_retry_at = r.Int(13);
  e.lease_owner = r.OptText(14);
  e.lease_until = r.OptInt(15);
  e.delivered_at = r.OptInt(16);
  e.last_error = r.OptText(17);
  e.created_at = r.Int(18);
  e.mail.list_unsubscribe = r.OptText(19);
  return e;
}

class SqlMailOutbox final : public MailOutbox {
 public:
  explicit SqlMailOutbox(std::shared_ptr<Database> db)
      : db_(db), d_(db->dialect()), queue_(db, {"export_mail", kColumns, kDue, "", "SENDING"}) {}

  StatusOr<MailEntry> EnqueueMail(const NewMail& mail) override {
    if (mail.recipients.empty()) return InvalidArgument("a mail needs at least one recipient");
    for (const std::string& r : mail.recipients) {
      if (r.empty() || r.find_first_of(",\r\n") != std::string::npos) {
        return InvalidArgument("recipient '" + utf8::Excerpt(r, 200) +
                               "' is empty or holds a comma or a line break");
      }
    }
    if (mail.list_unsubscribe && !IsListUnsubscribeValue(*mail.list_unsubscribe)) {
      return InvalidArgument("list unsubscribe URL '" + utf8::Excerpt(*mail.list_unsubscribe, 200) +
                             "' is not printable ASCII without spaces or brackets of at most " +
                             std::to_string(kMaxListUnsubscribeBytes) + " bytes");
    }
    if (mail.attachment_key && mail.attachment_name.empty()) {
      return InvalidArgument("an attachment needs a file name");
    }
    if (!mail.message_id.empty()) {
      if (mail.message_id.size() > 128 || mail.message_id.front() != '<' ||
          mail.message_id.back() != '>' ||
          mail.message_id.find_first_of(" \r\n") != std::string::npos) {
        return InvalidArgument("message id '" + utf8::Excerpt(mail.message_id, 200) +
                               "' is not <id@host> of at most 128 bytes");
      }
      EC_ASSIGN_OR_RETURN(std::optional<MailEntry> known, FindByMessageId(mail.message_id));
      if (known) return std::move(*known);
    }
    EC_ASSIGN_OR_RETURN(const int64_t id, ids_.Next());
    const std::string message_id =
        mail.message_id.empty() ? "<" + NewUuid() + "@export-center>" : mail.message_id;
    std::optional<std::string> name, type;
    if (mail.attachment_key) {
      name = mail.attachment_name;
      type = mail.attachment_type.empty() ? "application/octet-stream" : mail.attachment_type;
    }
    Status inserted = db_->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
      if (!mail.message_id.empty()) {
        // The key first: of two instances writing the same mail, one commits.
        EC_RETURN_IF_ERROR(c.Exec(Sql("INSERT INTO export_mail_key (message_id, mail_id,"
                                      " created_at) VALUES (?, ?, {NOW})"),
                                  {message_id, id})
                               .status());
      }
      return c
          .Exec(Sql("INSERT INTO export_mail (id, message_id, subscription_id, task_id,"
                    " recipients, subject, body_text, body_html, attachment_key,"
                    " attachment_name, attachment_type, list_unsubscribe, status, attempt_count,"
                    " next_retry_at, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', 0, {NOW}, {NOW},"
                    " {NOW})"),
                {id, message_id, mail.subscription_id, mail.task_id,
                 JoinRecipients(mail.recipients), mail.subject, mail.body_text, mail.body_html,
                 mail.attachment_key, name, type, mail.list_unsubscribe})
          .status();
    });
    if (inserted.code() == StatusCode::kConflict && !mail.message_id.empty()) {
      // Another instance wrote the same mail between our look and our insert.
      EC_ASSIGN_OR_RETURN(std::optional<MailEntry> known, FindByMessageId(mail.message_id));
      if (known) return std::move(*known);
    }
    EC_RETURN_IF_ERROR(inserted);
    return GetMail(id);
  }

  StatusOr<MailEntry> GetMail(int64_t id) override {
    EC_ASSIGN_OR_RETURN(std::vector<MailEntry> rows,
                        queue_.ListAs(&MailFromRow, "id = ?", "id", {id}));
    if (rows.empty()) return NotFound("mail " + std::to_string(id) + " not found");
    return std::move(rows[0]);
  }

  StatusOr<std::vector<int64_t>> SelectDueMails(int limit) override {
    return queue_.SelectDue(limit);
  }

  StatusOr<std::optional<MailEntry>> ClaimMail(int64_t id, const std::string& instance,
                                               int lease_seconds) override {
    return queue_.ClaimAs(&MailFromRow, id, instance, lease_seconds);
  }

  StatusOr<MarkOutcome> MarkMailDelivered(int64_t id, const std::string& instance) override {
    return queue_.Mark(id, instance,
                       "status = 'DELIVERED', delivered_at = {NOW}, last_error = NULL", {});
  }

  StatusOr<MarkOutcome> MarkMailRetry(int64_t id, const std::string& instance,
                                      const std::string& error, int64_t backoff_ms) override {
    return queue_.Mark(id, instance,
                       "status = 'PENDING', next_retry_at = {NOW} + ?, last_error = ?",
                       {backoff_ms, Cut(error)});
  }

  StatusOr<MarkOutcome> MarkMailDead(int64_t id, const std::string& instance,
                                     const std::string& error) override {
    return queue_.Mark(id, instance, "status = 'DEAD', last_error = ?", {Cut(error)});
  }

  Status RedeliverMail(int64_t id, const MailScope& scope) override {
    SqlParams params = {id};
    const std::string in_scope = ScopeCondition(scope, &params);
    EC_ASSIGN_OR_RETURN(
        int64_t n, db_->Exec(Sql("UPDATE export_mail SET status = 'PENDING', attempt_count = 0,"
                                 " next_retry_at = {NOW}, updated_at = {NOW}"
                                 " WHERE id = ? AND status = 'DEAD'" +
                                 in_scope),
                             params));
    if (n == 1) return Status::Ok();
    params = {id};
    const std::string where = "id = ?" + ScopeCondition(scope, &params);
    EC_ASSIGN_OR_RETURN(std::vector<MailEntry> rows,
                        queue_.ListAs(&MailFromRow, where, "id", params));
    if (rows.empty()) return NotFound("mail " + std::to_string(id) + " not found");
    const MailEntry& now = rows[0];
    return Conflict("mail " + std::to_string(id) + " is " + std::string(ToString(now.status)) +
                    ", not DEAD: only a dead mail is re-delivered");
  }

  StatusOr<std::vector<MailEntry>> ListDeadMails(int limit, const MailScope& scope) override {
    SqlParams params;
    const std::string where = kDeadWhere + ScopeCondition(scope, &params);
    return queue_.ListAs(&MailFromRow, where,
                         std::string(kDeadOrder) + " LIMIT " + std::to_string(limit), params);
  }

  StatusOr<int> PurgeDeliveredMails(int older_than_seconds, int limit) override {
    // DEAD rows stay: they are what the console lists and re-delivers. A
    // purged mail's key goes with it, in the same transaction.
    int64_t deleted = 0;
    EC_RETURN_IF_ERROR(db_->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
      deleted = 0;
      EC_ASSIGN_OR_RETURN(Rows picked,
                          c.Query(Sql(kPurgePick), {int64_t{older_than_seconds} * 1000, limit}));
      if (picked.empty()) return Status::Ok();
      std::string in;
      SqlParams ids;
      for (const Row& r : picked) {
        in += in.empty() ? "?" : ", ?";
        ids.emplace_back(r.Int(0));
      }
      EC_RETURN_IF_ERROR(
          c.Exec("DELETE FROM export_mail_key WHERE mail_id IN (" + in + ")", ids).status());
      EC_ASSIGN_OR_RETURN(deleted, c.Exec("DELETE FROM export_mail WHERE status = 'DELIVERED'"
                                          " AND id IN (" +
                                              in + ")",
                                          ids));
      return Status::Ok();
    }));
    return static_cast<int>(deleted);
  }

 private:
  std::string Sql(std::string_view text) const { return d_.Expand(text); }
  static std::string Cut(const std::string& text) { return utf8::Excerpt(text, kMaxErrorBytes); }

  // " AND <the row's subscription is in scope>" (its parameters appended), or "".
  static std::string ScopeCondition(const MailScope& scope, SqlParams* params) {
    if (!scope.tenant_id) return "";
    std::string sql =
        " AND subscription_id IN (SELECT id FROM export_subscription WHERE tenant_id = ?";
    params->emplace_back(*scope.tenant_id);
    if (scope.app_code) {
      sql += " AND app_code = ?";
      params->emplace_back(*scope.app_code);
    }
    return sql + ")";
  }

  StatusOr<std::optional<MailEntry>> FindByMessageId(const std::string& message_id) {
    EC_ASSIGN_OR_RETURN(std::vector<MailEntry> rows,
                        queue_.ListAs(&MailFromRow,
                                      "id IN (SELECT mail_id FROM export_mail_key"
                                      " WHERE message_id = ?)",
                                      "id", {message_id}));
    if (rows.empty()) return std::optional<MailEntry>();
    return std::optional<MailEntry>(std::move(rows[0]));
  }

  std::shared_ptr<Database> db_;
  const Dialect d_;
  const LeasedQueue queue_;
  LazyIds ids_{db_.get()};
};

}  // namespace

std::vector<MailPlanStatement> MailOutboxPlanStatements() {
  return {
      {"dead list",
       "SELECT " + std::string(kColumns) + " FROM export_mail WHERE " + kDeadWhere + " ORDER BY " +
           kDeadOrder + " LIMIT 50",
       {}},
      {"purge pick", kPurgePick, {int64_t{7} * 86400 * 1000, 100}},
  };
}

std::unique_ptr<MailOutbox> NewSqlMailOutbox(std::shared_ptr<Database> db) {
  return std::make_unique<SqlMailOutbox>(std::move(db));
}

}  // namespace export_center::store
