#pragma once
// The options of e-mail delivery (docs/configuration.md#mail), filled by
// config/ from the `mail:` section. Plain data, so config/ does not pull in
// libcurl or the mailer's thread.

#include <cstdint>
#include <string>
#include <vector>

namespace export_center::notify::mail {

// How the connection to the SMTP server is protected.
enum class MailTls {
  kStartTls,  // plain connect, then STARTTLS, required: a server without it is refused
  kImplicit,  // TLS from the first byte (smtps, usually port 465)
  kNone,      // no TLS: only for a host on loopback (a local relay, tests)
};

struct MailOptions {
  // The mailer runs when enabled and a host is configured.
  bool enabled = false;
  std::string host{};
  int port = 587;
  MailTls tls = MailTls::kStartTls;
  std::string ca_file{};   // PEM bundle the server's certificate must chain to; "" = system CAs
  std::string username{};  // empty: no AUTH
  std::string password{};  // env EXPORT_CENTER_MAIL_PASSWORD wins
  std::string from{};      // the envelope and header sender, user@domain
  // Domains a recipient's address may end in (compared case-insensitively,
  // exactly: "example.com" allows a@example.com, not a@sub.example.com).
  std::vector<std::string> allowed_domains{};
  int64_t attachment_max_bytes = 10LL * 1024 * 1024;  // larger: a link only
  int64_t message_max_bytes = 25LL * 1024 * 1024;     // the whole MIME message
  int max_recipients = 20;
  int connect_timeout_ms = 5000;
  int timeout_ms = 60000;  // a whole send: connect, TLS, AUTH, the message
  int max_attempts = 8;    // then DEAD
  std::vector<int> backoff_seconds = {30, 60, 300, 900, 3600};
  int lease_seconds = 180;  // a claim; above connect + timeout
  int poll_interval_ms = 2000;
  int batch_size = 10;
  int delivered_retention_seconds = 7 * 86400;
};

}  // namespace export_center::notify::mail
