#pragma once
// MailOutbox: e-mails waiting in the database until a mailer sends them
// (docs/subscriptions.md#delivery).
//
// A caller (a subscription's run, later the failure notices) enqueues one
// `export_mail` row per mail: recipients, subject, bodies, an optional
// attachment named by its storage object key, and a Message-ID fixed at that
// moment, so every retry of the row sends the same message.
//
// A mailer claims due rows like the notification outbox (both are a
// LeasedQueue, leased_queue.h): select due ids, then a conditional claim —
// SENDING by one instance until now + lease, attempt_count+1 — so two
// instances never hold one row at once; a claim whose lease ran out (its
// instance died) may be taken again. The end of a send is a conditional mark
// of that claim: DELIVERED (never claimable again), PENDING with a back-off,
// or DEAD once the attempts are used up. An operator's re-delivery puts a
// DEAD row back to PENDING with its attempts reset.
//
// Thread-safety: every method may be called from any thread. Each is one
// statement or transaction, decided with the database clock, and safe to
// retry after Unavailable (conditional updates make repeats harmless).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/leased_queue.h"

namespace export_center::store {

enum class MailStatus { kPending, kSending, kDelivered, kDead };
std::string_view ToString(MailStatus status);

// What a caller enqueues. Recipients are checked against the allowed domains
// by the caller (notify/mail/mail_options.h CheckRecipients) and again by the
// mailer before each send.
struct NewMail {
  // The Message-ID ("<…@…>"); empty: a new one is made. A caller that may
  // write the same mail twice (a round repeated after a crash, two
  // instances) derives it from what the mail is about: Message-IDs are
  // kept as keys (export_mail_key), so the second enqueue writes nothing (EnqueueMail).
  std::string message_id{};
  std::optional<int64_t> subscription_id{};
  std::optional<int64_t> task_id{};
  std::vector<std::string> recipients{};  // at least one; plain addresses
  std::string subject{};                  // UTF-8
  std::string body_text{};                // UTF-8
  std::optional<std::string> body_html{};
  // The attachment as an object key of the export storage, with the file
  // name and content type the mail gives it; none: no attachment.
  std::optional<std::string> attachment_key{};
  std::string attachment_name{};
  std::string attachment_type{};
  // The recipient's one-click unsubscribe URL, sent as the List-Unsubscribe
  // and List-Unsubscribe-Post headers (RFC 2369, RFC 8058); none: no such
  // headers. Printable ASCII without spaces, '<' or '>' (no line break can
  // reach a header), at most 900 bytes.
  std::optional<std::string> list_unsubscribe{};
};

struct MailEntry {
  int64_t id = 0;
  std::string message_id{};  // "<uuid@export-center>", the same on every retry
  NewMail mail{};
  MailStatus status = MailStatus::kPending;
  int32_t attempt_count = 0;  // sends tried, this claim included
  int64_t next_retry_at = 0;
  std::optional<std::string> lease_owner{};
  std::optional<int64_t> lease_until{};
  std::optional<int64_t> delivered_at{};
  std::optional<std::string> last_error{};
  int64_t created_at = 0;
};

// Whose mails an operator sees: every one (both unset), or those of the
// subscriptions of one tenant (and app). A mail of no subscription is only
// in the unset scope.
struct MailScope {
  std::optional<std::string> tenant_id{};
  std::optional<std::string> app_code{};
};

class MailOutbox {
 public:
  virtual ~MailOutbox() = default;

  // A new PENDING row, due now. InvalidArgument without a recipient or with
  // a recipient holding a comma or a line break (they are stored joined), or
  // with a `list_unsubscribe` that is not as above.
  // With a `message_id` already in the outbox nothing is written and the
  // row that has it is returned (idempotent: safe to repeat).
  virtual StatusOr<MailEntry> EnqueueMail(const NewMail& mail) = 0;
  virtual StatusOr<MailEntry> GetMail(int64_t id) = 0;

  // Ids of rows to send now, oldest due first: PENDING and due, or SENDING
  // with an expired lease (a mailer died holding it).
  virtual StatusOr<std::vector<int64_t>> SelectDueMails(int limit) = 0;
  // Conditional claim of one such row: SENDING by `instance` until now +
  // lease, attempt_count+1. nullopt when another instance won or the row is
  // no longer due.
  virtual StatusOr<std::optional<MailEntry>> ClaimMail(int64_t id, const std::string& instance,
                                                       int lease_seconds) = 0;
  // SENDING(by instance) → DELIVERED. kClaimLost: another instance took the
  // row after our lease ran out (nothing changed). Likewise for the two below.
  virtual StatusOr<MarkOutcome> MarkMailDelivered(int64_t id, const std::string& instance) = 0;
  // SENDING(by instance) → PENDING, due at now + backoff, with the error.
  virtual StatusOr<MarkOutcome> MarkMailRetry(int64_t id, const std::string& instance,
                                              const std::string& error, int64_t backoff_ms) = 0;
  // SENDING(by instance) → DEAD with the error; never sent again unless re-delivered.
  virtual StatusOr<MarkOutcome> MarkMailDead(int64_t id, const std::string& instance,
                                             const std::string& error) = 0;

  // The operators' console: DEAD → PENDING, attempts reset, due now (the
  // same Message-ID, so a server or client that has it deduplicates).
  // NotFound for an unknown id or one outside `scope`; Conflict when the row is not DEAD.
  virtual Status RedeliverMail(int64_t id, const MailScope& scope = {}) = 0;
  // DEAD rows, the latest to die first (index (status, updated_at, id)), at most `limit`.
  virtual StatusOr<std::vector<MailEntry>> ListDeadMails(int limit,
                                                         const MailScope& scope = {}) = 0;
  // Deletes up to `limit` DELIVERED rows delivered more than `older_than_seconds` ago.
  virtual StatusOr<int> PurgeDeliveredMails(int older_than_seconds, int limit) = 0;
};

}  // namespace export_center::store
