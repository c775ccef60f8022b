#include "api/events_ticket.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "api/signed_json.h"
#include "common/encoding.h"
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

// Whose places a nonce takes: the stream caps' key (tenant, app and user).
std::string UserKey(const Principal& p) {
  return p.tenant + '\n' + std::string(task::ToString(p.app)) + '\n' + p.user;
}

}  // namespace

EventsTickets::EventsTickets(std::string secret, EventsTicketOptions options)
    : secret_(std::move(secret)), options_(options) {}

StatusOr<std::string> EventsTickets::Issue(const Principal& principal, int64_t now_ms) {
  {
    const double per_user = static_cast<double>(options_.max_per_user);
    const int64_t ttl_ms = std::chrono::milliseconds(options_.ttl).count();
    MutexLock lock(&mu_);
    // A bucket idle for a whole ttl is full again, the same as none: forget
    // those once per ttl, so the map holds only the users of the last two.
    if (now_ms - buckets_swept_ms_ >= ttl_ms) {
      std::erase_if(issue_buckets_,
                    [&](const auto& kv) { return now_ms - kv.second.at_ms >= ttl_ms; });
      buckets_swept_ms_ = now_ms;
    }
    auto [it, fresh] = issue_buckets_.try_emplace(UserKey(principal), Bucket{per_user, now_ms});
    Bucket& b = it->second;
    if (!fresh && now_ms > b.at_ms) {
      b.tokens = std::min(per_user, b.tokens + per_user * static_cast<double>(now_ms - b.at_ms) /
                                                   static_cast<double>(ttl_ms));
      b.at_ms = now_ms;
    }
    if (b.tokens < 1.0) {
      return LimitExceeded("at most " + std::to_string(options_.max_per_user) +
                           " event-stream tickets per user every " +
                           std::to_string(options_.ttl.count()) + " s; retry shortly");
    }
    b.tokens -= 1.0;
  }
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

StatusOr<Principal> EventsTickets::Redeem(std::string_view ticket, int64_t now_ms,
                                          const Admission& admit) {
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
  {
    MutexLock lock(&mu_);
    ForgetExpiredLocked(now_ms);
    if (redeemed_.count(*nonce) != 0) return Refused();
  }
  // Before the nonce is spent: a stream refused by its caps leaves the
  // ticket usable and takes no place in the set.
  if (admit) EC_RETURN_IF_ERROR(admit(p));
  const std::string user_key = UserKey(p);
  MutexLock lock(&mu_);
  ForgetExpiredLocked(now_ms);
  if (redeemed_.count(*nonce) != 0) return Refused();
  auto mine = redeemed_per_user_.find(user_key);
  if (mine != redeemed_per_user_.end() && mine->second >= options_.max_per_user) {
    return LimitExceeded("at most " + std::to_string(options_.max_per_user) +
                         " event-stream connects per user every " +
                         std::to_string(options_.ttl.count()) + " s; retry shortly");
  }
  if (redeemed_.size() >= options_.max_redeemed) {
    return Unavailable("too many event-stream connects on this instance; retry shortly");
  }
  redeemed_.emplace(*nonce, Redeemed{*exp, user_key});
  by_expiry_.emplace(*exp, *nonce);
  ++redeemed_per_user_[user_key];
  return p;
}

void EventsTickets::ForgetExpiredLocked(int64_t now_ms) {
  // An expired ticket is refused by its exp, so its nonce need not be kept.
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now_ms) {
    auto it = redeemed_.find(by_expiry_.begin()->second);
    if (it != redeemed_.end()) {
      auto mine = redeemed_per_user_.find(it->second.user_key);
      if (mine != redeemed_per_user_.end() && --mine->second == 0) redeemed_per_user_.erase(mine);
      redeemed_.erase(it);
    }
    by_expiry_.erase(by_expiry_.begin());
  }
}

}  // namespace export_center::api
