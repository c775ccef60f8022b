#include "config/mail_yaml.h"

#include <fstream>
#include <regex>
#include <string>

#include "config/config.h"

namespace export_center::config {
namespace {

using notify::mail::MailTls;

constexpr int64_t kDay = 86400;
const char kDomain[] = R"(^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$)";
const char kAddress[] = R"(^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9.-]{1,253}$)";

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string TlsName(MailTls tls) {
  switch (tls) {
    case MailTls::kStartTls:
      return "starttls";
    case MailTls::kImplicit:
      return "implicit";
    case MailTls::kNone:
      return "none";
  }
  return "starttls";
}

}  // namespace

void ReadSubscriptionDelivery(MapReader& r, subscription::DeliveryOptions* c) {
  int64_t grace_minutes = c->failure_grace_period_ms / 60000;
  if (r.Int64("failure-grace-period-minutes", &grace_minutes, 1, 30 * 24 * 60)) {
    c->failure_grace_period_ms = grace_minutes * 60000;
  }
  int64_t ttl_minutes = c->link_ttl_ms / 60000;
  if (r.Int64("link-ttl-minutes", &ttl_minutes, 5, 30 * 24 * 60))
    c->link_ttl_ms = ttl_minutes * 60000;
  r.Bool("attach", &c->attachments);
  r.Int("delivery-poll-interval-ms", &c->poll_interval_ms, 100, 600000);
}

void ReadMail(MapReader& r, notify::mail::MailOptions* c) {
  r.Bool("enabled", &c->enabled);
  r.String("host", &c->host);
  r.Int("port", &c->port, 1, 65535);
  std::string tls = TlsName(c->tls);
  r.Enum("tls", &tls, {"starttls", "implicit", "none"});
  c->tls = tls == "implicit" ? MailTls::kImplicit
                             : (tls == "none" ? MailTls::kNone : MailTls::kStartTls);
  r.String("ca-file", &c->ca_file);
  r.String("username", &c->username);
  r.String("password", &c->password);
  r.String("from", &c->from);
  r.StringList("allowed-domains", &c->allowed_domains);
  r.Int64("attachment-max-bytes", &c->attachment_max_bytes, 0, 1LL << 30);
  r.Int64("message-max-bytes", &c->message_max_bytes, 1024, 1LL << 31);
  r.Int("max-recipients", &c->max_recipients, 1, 1000);
  r.Int("connect-timeout-ms", &c->connect_timeout_ms, 100, 60000);
  r.Int("timeout-ms", &c->timeout_ms, 1000, 600000);
  r.Int("max-attempts", &c->max_attempts, 1, 100);
  r.IntList("backoff-seconds", &c->backoff_seconds, 1, kDay);
  r.Int("lease-seconds", &c->lease_seconds, 5, 3600);
  r.Int("poll-interval-ms", &c->poll_interval_ms, 100, 600000);
  r.Int("batch-size", &c->batch_size, 1, 1000);
  r.Int("delivered-retention-seconds", &c->delivered_retention_seconds, 3600, 365 * kDay);
  r.Finish();
}

void CheckMail(const notify::mail::MailOptions& c, ErrorList* errors) {
  static const std::regex kDomainRe(kDomain);
  static const std::regex kAddressRe(kAddress);
  for (const std::string& d : c.allowed_domains) {
    if (!std::regex_match(d, kDomainRe)) {
      errors->Add("mail.allowed-domains", Quote(d) + " is not a domain name",
                  "domain names such as example.com (no '@', no wildcard)");
    }
  }
  if (!c.from.empty() && !std::regex_match(c.from, kAddressRe)) {
    errors->Add("mail.from", Quote(c.from) + " is not an address", "name@domain");
  }
  if (!c.username.empty() && c.password.empty()) {
    errors->Add("mail.password", "is required with mail.username",
                "set mail.password or EXPORT_CENTER_MAIL_PASSWORD");
  }
  if (!c.ca_file.empty() && !std::ifstream(c.ca_file).good()) {
    errors->Add("mail.ca-file", Quote(c.ca_file) + " cannot be read", "a PEM file of CAs");
  }
  if (c.tls == MailTls::kNone && !c.host.empty() && !IsLoopbackHost(c.host)) {
    // Without TLS the password and the files travel in clear: a relay on the
    // same machine only.
    errors->Add("mail.tls", "none is allowed only for a loopback host, not " + Quote(c.host),
                "starttls or implicit; none with host 127.0.0.1, ::1 or localhost");
  }
  if (c.enabled) {
    if (c.host.empty()) errors->Add("mail.host", "is required when mail.enabled is true");
    if (c.from.empty()) errors->Add("mail.from", "is required when mail.enabled is true");
    if (c.allowed_domains.empty()) {
      errors->Add("mail.allowed-domains", "is required when mail.enabled is true",
                  "the domains recipients may be in, e.g. [example.com]");
    }
  }
  if (c.attachment_max_bytes * 4 / 3 + 65536 > c.message_max_bytes) {
    errors->Add("mail.attachment-max-bytes",
                std::to_string(c.attachment_max_bytes) +
                    " does not fit mail.message-max-bytes once base64-encoded",
                "at most (message-max-bytes - 64 KiB) × 3/4");
  }
  // A send must end within its claim, or a second instance could take the
  // row and send it while the first still waits for an answer.
  if (int64_t{c.lease_seconds} * 1000 < c.timeout_ms + 2000LL) {
    errors->Add("mail.lease-seconds",
                std::to_string(c.lease_seconds) + " s is too short for mail.timeout-ms",
                "at least timeout-ms / 1000 + 2");
  }
}

}  // namespace export_center::config
