#include "notify/mail_publisher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "common/backoff.h"
#include "notify/mail/mail_recipients.h"

namespace export_center::notify {

std::string_view ToString(MailResult result) {
  switch (result) {
    case MailResult::kDelivered:
      return "delivered";
    case MailResult::kFailed:
      return "failed";
    case MailResult::kDead:
      return "dead";
  }
  return "failed";
}

MailPublisher::MailPublisher(store::MailOutbox* outbox, mail::MailOptions options,
                             std::string instance, mail::MailSender* sender,
                             AttachmentReader attachments, MailObserver* observer)
    : outbox_(outbox),
      options_(std::move(options)),
      instance_(std::move(instance)),
      sender_(sender),
      attachments_(std::move(attachments)),
      observer_(observer != nullptr ? observer : &no_observer_),
      next_purge_(std::chrono::steady_clock::now()),
      worker_({"mailer", std::chrono::milliseconds(options_.poll_interval_ms)},
              [this] { return Round(); }) {}

MailPublisher::~MailPublisher() { Stop(); }

void MailPublisher::Start() { worker_.Start(); }

void MailPublisher::Stop() { worker_.Stop(); }

PeriodicWorker::Next MailPublisher::Round() {
  const int claimed = DeliverDueOnce();
  if (std::chrono::steady_clock::now() >= next_purge_) {
    // Delivered rows are kept a while for operators; DEAD rows stay.
    auto purged = outbox_->PurgeDeliveredMails(options_.delivered_retention_seconds, 500);
    if (!purged.ok()) spdlog::warn("mailer: purge failed: {}", purged.status().ToString());
    next_purge_ = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  }
  return claimed >= options_.batch_size ? PeriodicWorker::Next::Now()
                                        : PeriodicWorker::Next::Interval();
}

int MailPublisher::DeliverDueOnce() {
  store::ClaimRound<store::MailEntry> round;
  round.batch_size = options_.batch_size;
  round.select_due = [this](int limit) { return outbox_->SelectDueMails(limit); };
  round.claim = [this](int64_t id) {
    // Before the claim statement: the database's lease starts after this.
    claim_started_ = std::chrono::steady_clock::now();
    return outbox_->ClaimMail(id, instance_, options_.lease_seconds);
  };
  round.handle = [this](const store::MailEntry& entry) {
    DeliverOne(entry, claim_started_);
    return true;  // a failure is recorded on its row; the round goes on
  };
  round.stopping = [this] { return worker_.Stopping(); };
  round.on_claim_error = [](int64_t id, const Status& error) {
    spdlog::warn("mailer: claim of mail {} failed: {}", id, error.ToString());
  };
  auto done = store::RunClaimRound(round);
  if (!done.ok()) {
    spdlog::warn("mailer: cannot read due mails: {}", done.status().ToString());
    return 0;
  }
  return done->claimed;
}

void MailPublisher::DeliverOne(const store::MailEntry& entry,
                               std::chrono::steady_clock::time_point claim_started) {
  // The configuration may have dropped a domain since the row was written.
  Status allowed = mail::CheckRecipients(options_, entry.mail.recipients);
  if (!allowed.ok()) return Failed(entry, allowed);

  mail::MailMessage message;
  message.from = options_.from;
  message.to = entry.mail.recipients;
  message.subject = entry.mail.subject;
  message.text = entry.mail.body_text;
  message.html = entry.mail.body_html;
  message.message_id = entry.message_id;
  message.date_ms = entry.created_at;  // fixed: a retry sends the same bytes
  message.list_unsubscribe = entry.mail.list_unsubscribe;
  if (entry.mail.attachment_key) {
    if (!attachments_) return Failed(entry, Internal("no attachment reader configured"));
    StatusOr<std::string> bytes =
        attachments_(*entry.mail.attachment_key, options_.attachment_max_bytes);
    if (!bytes.ok()) {
      const Status& e = bytes.status();
      // Gone or too large stays so: the mail as asked cannot be sent.
      const bool permanent =
          e.code() == StatusCode::kNotFound || e.code() == StatusCode::kLimitExceeded;
      return Failed(entry, permanent ? InvalidArgument("attachment: " + e.message())
                                     : Unavailable("attachment: " + e.message()));
    }
    message.attachment =
        mail::MailAttachment{entry.mail.attachment_name, entry.mail.attachment_type, *bytes};
  }

  const auto lease = std::chrono::milliseconds(int64_t{options_.lease_seconds} * 1000 - 1000);
  const auto deadline =
      claim_started + std::min(std::chrono::milliseconds(options_.timeout_ms), lease);
  Status sent = sender_->Send(message, deadline);
  if (!sent.ok()) return Failed(entry, sent);
  auto marked = outbox_->MarkMailDelivered(entry.id, instance_);
  if (!marked.ok() || *marked == store::MarkOutcome::kClaimLost) {
    // Sent but not recorded: only a database failure gets here (the deadline
    // ends the send before the lease); after the lease the row is sent again
    // with the same Message-ID.
    spdlog::warn("mail {} sent but not recorded: {}", entry.id,
                 marked.ok() ? "claim lost" : marked.status().ToString());
  }
  Report(MailResult::kDelivered);
}

void MailPublisher::Failed(const store::MailEntry& entry, const Status& error) {
  const bool permanent = error.code() == StatusCode::kInvalidArgument;
  if (permanent || entry.attempt_count >= options_.max_attempts) {
    spdlog::error("mail {} ({}) is dead after {} attempt(s): {}", entry.id, entry.message_id,
                  entry.attempt_count, error.ToString());
    auto marked = outbox_->MarkMailDead(entry.id, instance_, error.message());
    if (!marked.ok()) {
      spdlog::warn("mail {} not marked dead: {}", entry.id, marked.status().ToString());
    }
    Report(MailResult::kDead);
    return;
  }
  const int64_t backoff = OutboxBackoffMs(options_.backoff_seconds, entry.attempt_count);
  spdlog::warn("mail {} ({}) failed (attempt {}), retry in {} ms: {}", entry.id, entry.message_id,
               entry.attempt_count, backoff, error.ToString());
  auto marked = outbox_->MarkMailRetry(entry.id, instance_, error.message(), backoff);
  if (!marked.ok()) {
    spdlog::warn("mail {} failure not recorded: {}", entry.id, marked.status().ToString());
  }
  Report(MailResult::kFailed);
}

}  // namespace export_center::notify
