#include "api/subscription_links.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "api/handler_deps.h"
#include "common/digest.h"
#include "common/encoding.h"

namespace export_center::api {
namespace {

constexpr char kUnsubscribeContext[] = "export-center unsubscribe v1\n";

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// RFC 3986 unreserved characters and '@' stay; every other byte is %XX.
std::string QueryEscape(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '@') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

DownloadGrant SubscriptionFileGrant(const task::Task& t, const registry::ExportDefinition& def,
                                    int64_t expires_at_ms) {
  DownloadGrant grant{t.id, t.tenant_id, t.requested_by, expires_at_ms, def.required_permission};
  // A rule with no decision in the file's policy showed its column in full:
  // the owner held its permission at the run.
  for (const task::ColumnRule& rule : def.column_rules) {
    const bool decided =
        std::any_of(t.column_policy.decisions.begin(), t.column_policy.decisions.end(),
                    [&rule](const task::ColumnDecision& d) { return d.key == rule.key; });
    const std::string& perm = rule.required_permission;
    if (!decided && std::find(grant.column_permissions.begin(), grant.column_permissions.end(),
                              perm) == grant.column_permissions.end()) {
      grant.column_permissions.push_back(perm);
    }
  }
  return grant;
}

std::string UnsubscribeSignature(std::string_view secret, int64_t subscription_id,
                                 std::string_view recipient) {
  return Base64UrlEncode(HmacSha256(secret, std::string(kUnsubscribeContext) +
                                                std::to_string(subscription_id) + "\n" +
                                                Lower(recipient)));
}

bool CheckUnsubscribeSignature(std::string_view secret, int64_t subscription_id,
                               std::string_view recipient, std::string_view sig) {
  return SecureEquals(UnsubscribeSignature(secret, subscription_id, recipient), sig);
}

std::string UnsubscribeUrl(std::string_view secret, const std::string& base,
                           int64_t subscription_id, const std::string& recipient) {
  return base + ApiPath("/subscriptions/" + std::to_string(subscription_id) + "/unsubscribe") +
         "?r=" + QueryEscape(recipient) +
         "&sig=" + UnsubscribeSignature(secret, subscription_id, recipient);
}

}  // namespace export_center::api
