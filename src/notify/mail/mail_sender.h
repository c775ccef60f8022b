#pragma once
// MailSender: hands one message to an SMTP server (docs/subscriptions.md#delivery).
//
// Send() is at least once at the wire: an answer lost after the server took
// the message (a timeout after the final ".") reports a failure, and the
// caller's retry sends the same bytes with the same Message-ID, which is how
// a receiver deduplicates. Nothing is sent once `deadline` has passed, and a
// send in progress is cut at the deadline.
//
// Codes: Ok — the server accepted the message for every recipient;
// Unavailable — a retry may succeed: connect refused, a 4xx answer, network
// trouble mid-way, and also the server's certificate not verifying or
// STARTTLS not offered (the message names the check; an operator must look,
// but a fixed server needs no re-delivery); DeadlineExceeded — the deadline
// passed (before or during the send); Unauthenticated — AUTH refused;
// InvalidArgument — the message itself was refused (a 5xx to MAIL, RCPT or
// DATA, larger than the cap): sending it again changes nothing.
//
// Thread-safety: Send may be called from several threads at once.

#include <chrono>

#include "common/status.h"
#include "notify/mail/mail_message.h"

namespace export_center::notify::mail {

class MailSender {
 public:
  virtual ~MailSender() = default;
  virtual Status Send(const MailMessage& message,
                      std::chrono::steady_clock::time_point deadline) = 0;
};

}  // namespace export_center::notify::mail
