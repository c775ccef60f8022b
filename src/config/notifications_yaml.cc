#include "config/notifications_yaml.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>
#include <set>

#include "common/ascii.h"
#include "config/config.h"
#include "config/secret_check.h"

namespace export_center::config {
namespace {

constexpr int64_t kDay = 86400;
// The same bar as download links: 128 bits of key for an HMAC.
constexpr size_t kMinSecretBytes = 16;
const char kReceiverIdPattern[] = "^[a-z][a-z0-9-]{0,63}$";
// host or [ipv6], then an optional port.
const char kHostPort[] = R"(([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(:([0-9]{1,5}))?)";
const std::vector<std::string> kEndStates = {"SUCCEEDED", "FAILED", "CANCELLED",
                                             "EXPIRED",   "STALE",  "INCONSISTENT"};

std::string SecretEnv(const std::string& id) {
  return "EXPORT_CENTER_WEBHOOK_SECRET_" + UpperSnake(id);
}

notify::WebhookReceiver ReadReceiver(const std::string& id, const YAML::Node& node,
                                     const std::string& path, const MapReader& list) {
  notify::WebhookReceiver w;
  w.id = id;
  if (!std::regex_match(id, std::regex(kReceiverIdPattern))) {
    list.errors()->Add(path, "invalid receiver id", kReceiverIdPattern);
  }
  // The secret's variable (SecretEnv, an alias of the rule's name) is the
  // overlay's: config.cc lists it with the other aliases.
  MapReader r(node, path, list.errors(), list.env());
  r.String("url", &w.url);
  r.String("secret", &w.secret);
  r.StringList("export-types", &w.export_types);
  r.StringList("users", &w.users);
  r.StringList("tenants", &w.tenants);
  r.StringList("events", &w.events);
  r.Finish();
  return w;
}

// "host:port" with the scheme's default port, host lower-cased; "" when the
// URL is not http(s)://host[:port][/path][?query] (reported under `path`).
std::string TargetOf(const std::string& url, const std::string& path, ErrorList* errors) {
  const char kAllowed[] = "http(s)://host[:port]/path, no user info or fragment";
  static const std::regex kUrl(std::string(R"(^(https?)://)") + kHostPort +
                               R"((/[^\s?#]*)?(\?[^\s#]*)?$)");
  std::smatch m;
  if (url.empty()) {
    errors->Add(path, "is required", kAllowed);
    return "";
  }
  if (url.find('@') != std::string::npos && url.find('@') < url.find('/', url.find("://") + 3)) {
    errors->Add(path, Quote(url) + " must not contain user info", kAllowed);
    return "";
  }
  if (!std::regex_match(url, m, kUrl)) {
    errors->Add(path, Quote(url) + " is not a webhook URL", kAllowed);
    return "";
  }
  std::string port = m[4].matched ? m[4].str() : (m[1] == "https" ? "443" : "80");
  if (std::stoi(port) < 1 || std::stoi(port) > 65535) {
    errors->Add(path, "port " + port + " is out of range", "[1, 65535]");
    return "";
  }
  return ToLowerAscii(m[2].str()) + ":" + port;
}

void CheckReceiver(const notify::WebhookReceiver& w, const std::set<std::string>& allowed,
                   const YAML::Node& definitions, ErrorList* errors) {
  const std::string path = "notifications.receivers." + w.id;
  const std::string target = TargetOf(w.url, path + ".url", errors);
  if (!target.empty() && allowed.count(target) == 0) {
    // No SSRF: a receiver reaches only what the operator listed, loopback
    // and private addresses included.
    errors->Add(path + ".url",
                "target " + Quote(target) + " is not in notifications.allowed-targets",
                "add \"" + target + "\" to notifications.allowed-targets, or use a listed target");
  }
  CheckSecret(w.secret, kMinSecretBytes, path + ".secret", SecretEnv(w.id), errors);
  for (const std::string& type : w.export_types) {
    if (!definitions.IsMap() || !definitions[type].IsDefined()) {
      errors->Add(path + ".export-types", "names " + Quote(type) + ", which is not defined",
                  "names under definitions:");
    }
  }
  for (const std::string& event : w.events) {
    if (std::find(kEndStates.begin(), kEndStates.end(), event) == kEndStates.end()) {
      errors->Add(path + ".events", Quote(event) + " is not an end state", JoinList(kEndStates));
    }
  }
  for (const auto* list : {&w.users, &w.tenants}) {
    for (const std::string& value : *list) {
      if (value.empty()) {
        errors->Add(path + (list == &w.users ? ".users" : ".tenants"), "contains an empty value",
                    "non-empty strings");
      }
    }
  }
}

}  // namespace

void ReadNotifications(MapReader& r, notify::NotificationOptions* c) {
  r.Bool("enabled", &c->enabled);
  r.StringList("allowed-targets", &c->allowed_targets);
  r.Int("connect-timeout-ms", &c->connect_timeout_ms, 100, 60000);
  r.Int("timeout-ms", &c->timeout_ms, 100, 60000);
  r.Int("max-attempts", &c->max_attempts, 1, 100);
  r.IntList("backoff-seconds", &c->backoff_seconds, 1, kDay);
  r.Int("lease-seconds", &c->lease_seconds, 5, 3600);
  r.Int("poll-interval-ms", &c->poll_interval_ms, 100, 600000);
  r.Int("batch-size", &c->batch_size, 1, 1000);
  r.Int("delivered-retention-seconds", &c->delivered_retention_seconds, 3600, 365 * kDay);
  YAML::Node receivers = r.Get("receivers");
  MapReader list(receivers, JoinPath(r.path(), "receivers"), r.errors(), r.env());
  for (const auto& [id, node] : list.entries()) {
    c->receivers.push_back(ReadReceiver(id, node, JoinPath(list.path(), id), list));
  }
  r.Finish();
}

void CheckNotifications(const notify::NotificationOptions& c, const YAML::Node& root,
                        ErrorList* errors) {
  static const std::regex kTarget(std::string("^") + kHostPort + "$");
  std::set<std::string> allowed;
  for (const std::string& target : c.allowed_targets) {
    std::smatch m;
    if (!std::regex_match(target, m, kTarget) || !m[3].matched) {
      errors->Add("notifications.allowed-targets", Quote(target) + " is not host:port",
                  "host:port, e.g. hooks.example.com:443 or 127.0.0.1:9100");
      continue;
    }
    allowed.insert(ToLowerAscii(target));
  }
  const YAML::Node definitions = root.IsMap() ? root["definitions"] : YAML::Node();
  for (const notify::WebhookReceiver& w : c.receivers) {
    CheckReceiver(w, allowed, definitions, errors);
  }
  // A delivery must end within its claim, or a second instance could take
  // the row and send it while the first still waits for an answer.
  if (int64_t{c.lease_seconds} * 1000 <= c.connect_timeout_ms + 2LL * c.timeout_ms) {
    errors->Add(
        "notifications.lease-seconds",
        std::to_string(c.lease_seconds) + " s is too short for connect-timeout-ms + 2 × timeout-ms",
        "more than (connect-timeout-ms + 2 × timeout-ms) / 1000");
  }
}

}  // namespace export_center::config
