#pragma once
// MailPublisher: sends the rows of the mail outbox (store/mail_outbox.h)
// through a MailSender (docs/subscriptions.md#delivery).
//
// Every instance may run one. A round selects due rows, claims each with a
// lease on the database clock (two instances never hold one row; a row held
// by a dead instance is taken again after its lease), builds the message
// (the row's Message-ID and creation time, so every retry is the same
// message), reads the attachment through the injected reader, sends, and
// marks the claim:
//   accepted by the server           → DELIVERED (never claimable again);
//   refused for good (InvalidArgument: a 5xx to the message, too large, a
//   recipient outside mail.allowed-domains, the attachment gone) → DEAD;
//   anything else (connect, 4xx, TLS, AUTH, timeout) → PENDING after the
//   back-off (OutboxBackoffMs over mail.backoff-seconds), DEAD once
//   mail.max-attempts sends failed.
//
// Never sent after the lease: a send's deadline is the claim's start plus
// min(timeout, lease − 1 s), measured on the process's monotonic clock from
// before the claim statement, so it ends before the database's lease does;
// an instance that stalls past its lease sends nothing, and the instance that
// took the row over is the only one that sends it.
//
// Threads: one owned worker thread; Stop() from any thread.

#include <chrono>
#include <functional>
#include <string>

#include "common/periodic_worker.h"
#include "common/status.h"
#include "notify/mail/mail_options.h"
#include "notify/mail/mail_sender.h"
#include "store/mail_outbox.h"

namespace export_center::notify {

// Reads an attachment's bytes by its object key, at most `max_bytes`
// (LimitExceeded above; NotFound when the object is gone). Injected by app/
// over the export storage, so notify/ does not depend on storage/.
using AttachmentReader =
    std::function<StatusOr<std::string>(const std::string& key, int64_t max_bytes)>;

enum class MailResult { kDelivered, kFailed, kDead };
std::string_view ToString(MailResult result);

// What the mailer reports to metrics; on the mailer's thread; must not block.
class MailObserver {
 public:
  virtual ~MailObserver() = default;
  virtual void MailAttempted(MailResult result) {}
};

class MailPublisher {
 public:
  // `outbox`, `sender` and `observer` (may be null) must outlive the publisher.
  MailPublisher(store::MailOutbox* outbox, mail::MailOptions options, std::string instance,
                mail::MailSender* sender, AttachmentReader attachments,
                MailObserver* observer = nullptr);
  ~MailPublisher();
  MailPublisher(const MailPublisher&) = delete;
  MailPublisher& operator=(const MailPublisher&) = delete;

  void Start();
  void Stop();

  // One round: claims and sends up to batch-size due rows, one after the
  // other. Returns how many rows were claimed. Public for tests.
  int DeliverDueOnce();

 private:
  PeriodicWorker::Next Round();
  void DeliverOne(const store::MailEntry& entry,
                  std::chrono::steady_clock::time_point claim_started);
  void Failed(const store::MailEntry& entry, const Status& error);
  void Report(MailResult result) { observer_->MailAttempted(result); }

  store::MailOutbox* const outbox_;
  const mail::MailOptions options_;
  const std::string instance_;
  mail::MailSender* const sender_;
  const AttachmentReader attachments_;
  MailObserver no_observer_;
  MailObserver* const observer_;  // never null

  // Worker thread (or DeliverDueOnce's caller) only.
  std::chrono::steady_clock::time_point claim_started_;
  std::chrono::steady_clock::time_point next_purge_;
  PeriodicWorker worker_;
};

}  // namespace export_center::notify
