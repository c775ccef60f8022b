#include "api/events_ticket.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "api/signed_json.h"
#include "common/ids.h"

namespace export_center::api {
namespace {

// Domain separation: a download link's MAC (the same secret) never opens a stream.
constexpr std::string_view kContext = "export-center/events-ticket/v1.";
// Room for a principal with many permissions; the JWT cap is 8 KiB.
constexpr size_t kMaxTicketBytes = 12288;
constexpr size_t kNonceBytes = 16;

const Status& Refused() {
  static const Status refused = Unauthenticated(
      "invalid, expired or already used events ticket; POST /export-tasks/events-ticket for a new "
      "one");
  return refused;
}

}  // namespace

EventsTickets::EventsTickets(std::string secret, EventsTicketOptions options)
    : secret_(std::move(secret)), options_(options) {}

StatusOr<std::string> EventsTickets::Issue(const Principal& principal, int64_t now_ms) const {
  unsigned char nonce[kNonceBytes];
  if (!SecureRandomBytes(nonce, sizeof nonce)) return Internal("no random bytes for a ticket");
  int64_t exp = now_ms + std::chrono::milliseconds(options_.ttl).count();
  if (principal.valid_until_ms > 0) exp = std::min(exp, principal.valid_until_ms);
  nlohmann::json body = {
      {"sub", principal.user},
      {"ten", principal.tenant},
      {"app", std::string(task::ToString(principal.app))},
      {"prm", principal.perms},
      {"til", principal.valid_until_ms},
      {"exp", exp},
      {"n", Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(nonce), sizeof nonce))}};
  return SignJson(secret_, kContext, body);
}

StatusOr<Principal> EventsTickets::Redeem(std::string_view ticket, int64_t now_ms) {
  auto body = OpenSignedJson(secret_, kContext, ticket, kMaxTicketBytes);
  if (!body) return Refused();
  const nlohmann::json& j = *body;
  auto str = [&](const char* key) -> const std::string* {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  auto integer = [&](const char* key) -> std::optional<int64_t> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  const std::string *sub = str("sub"), *ten = str("ten"), *app = str("app"), *nonce = str("n");
  auto exp = integer("exp");
  auto until = integer("til");
  auto prm = j.find("prm");
  if (!sub || !ten || !app || !nonce || !exp || !until || prm == j.end() || !prm->is_array()) {
    return Refused();
  }
  auto app_code = task::ParseAppCode(*app);
  if (!app_code) return Refused();
  Principal p{*sub, *ten, *app_code, {}, *until};
  for (const auto& perm : *prm) {
    if (!perm.is_string()) return Refused();
    p.perms.push_back(perm.get<std::string>());
  }
  if (now_ms >= *exp) return Refused();
  MutexLock lock(&mu_);
  ForgetExpiredLocked(now_ms);
  if (redeemed_.count(*nonce) != 0) return Refused();
  if (redeemed_.size() >= options_.max_redeemed) {
    return Unavailable("too many event-stream connects on this instance; retry shortly");
  }
  redeemed_.emplace(*nonce, *exp);
  by_expiry_.emplace(*exp, *nonce);
  return p;
}

void EventsTickets::ForgetExpiredLocked(int64_t now_ms) {
  // An expired ticket is refused by its exp, so its nonce need not be kept.
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now_ms) {
    redeemed_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
}

}  // namespace export_center::api
