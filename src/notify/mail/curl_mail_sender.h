#pragma once
// The MailSender over libcurl's SMTP (docs/subscriptions.md#delivery).
//
// Why libcurl: a well-kept library, packaged by Debian (libcurl4-openssl-dev),
// that already speaks SMTP with STARTTLS (required, never opportunistic) or
// implicit TLS, AUTH (PLAIN/LOGIN as the server offers), certificate and host
// name verification through OpenSSL, and per-transfer connect and total
// timeouts — everything a mail relay asks of a client, none of it ours to
// get wrong. The message bytes are ours (mail_message.h); curl carries them.

#include <memory>

#include "common/status.h"
#include "notify/mail/mail_options.h"
#include "notify/mail/mail_sender.h"

namespace export_center::notify::mail {

// A sender to options.host:port with options.tls, AUTH when a username is
// set, options.ca_file when set, options.connect_timeout_ms and timeout_ms
// (each further bounded by a send's deadline) and options.message_max_bytes.
// InvalidArgument when the options cannot make a sender (no host, tls none
// with a host that is not loopback).
StatusOr<std::unique_ptr<MailSender>> NewCurlMailSender(const MailOptions& options);

}  // namespace export_center::notify::mail
