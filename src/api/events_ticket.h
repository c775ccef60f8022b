#pragma once
// Tickets for the task-event stream
// (docs/http-api.md#post-export-tasksevents-ticket--a-ticket-for-the-event-stream).
//
// EventSource cannot send headers, so a browser's stream URL carries its
// credential in the query, where proxies and access logs keep it. A bearer
// token there would be replayable for its whole life; a ticket opens ONE
// stream within its short life (server.events-ticket-ttl-seconds, at most
// 30 s) and nothing else, for the principal it was issued to, and that stream
// still ends when the token behind it expires (Principal::valid_until_ms).
//
// Stateless by design: a ticket is a signed value (signed_json.h) holding the
// principal, the token's end, the ticket's own expiry and a random nonce,
// signed with auth.download-url-secret, which every instance of a fleet
// shares. A ticket issued by instance A therefore opens a stream on instance
// B behind the same balancer. Kept only in A's memory it would fail there;
// kept in the task store it would cost a write per connect and a database
// round trip on every page load. Single use is enforced per instance: each
// keeps the nonces redeemed on it until their tickets expire, bounded in
// count. The price, documented: within its 30 s a leaked ticket could open
// one stream per instance, each for the same principal and ending at the
// same token expiry.
//
// One user cannot deny streams to others: the instance's nonce set is shared,
// so each user (tenant, app and user) may hold at most max_per_user of its
// places, a redemption first asks the caller's admission (the stream caps)
// and spends no nonce when refused, and each user is issued at most
// max_per_user tickets per ticket life on one instance (a token bucket).
//
// Thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "api/auth.h"
#include "common/mutex.h"
#include "common/status.h"

namespace export_center::api {

struct EventsTicketOptions {
  std::chrono::seconds ttl{30};  // 1..30 (config: server.events-ticket-ttl-seconds)
  // Nonces remembered per instance; full of unexpired ones, redemption is
  // refused (Unavailable) rather than forgetting one that could be replayed.
  size_t max_redeemed = 10000;
  // Per user (tenant, app and user) on one instance: tickets issued per ttl
  // (a bucket refilled evenly over ttl) and unexpired nonces held in the
  // redeemed set; over either: LimitExceeded. config:
  // server.events-tickets-per-user.
  size_t max_per_user = 60;
};

class EventsTickets {
 public:
  // `secret` is shared by every instance that must accept this one's tickets.
  EventsTickets(std::string secret, EventsTicketOptions options);
  EventsTickets(const EventsTickets&) = delete;
  EventsTickets& operator=(const EventsTickets&) = delete;

  // A ticket for `principal`, valid for options.ttl from `now_ms` (Unix ms),
  // never past principal.valid_until_ms when that is set. LimitExceeded when
  // the principal was issued max_per_user tickets within the last ttl on this
  // instance; Internal when the system has no random bytes for the nonce.
  StatusOr<std::string> Issue(const Principal& principal, int64_t now_ms);

  // Decides whether the ticket's principal may open a stream now (the stream
  // caps); a refusal is returned as is and spends no nonce.
  using Admission = std::function<Status(const Principal&)>;

  // The principal the ticket was issued to (valid_until_ms included), once:
  // Unauthenticated when the ticket is malformed, forged, expired or already
  // redeemed on this instance; then `admit`'s refusal, if any; LimitExceeded
  // when the principal already holds max_per_user unexpired nonces here;
  // Unavailable when this instance's set of redeemed nonces is full of
  // unexpired ones. Only a success spends the nonce.
  StatusOr<Principal> Redeem(std::string_view ticket, int64_t now_ms,
                             const Admission& admit = nullptr);

  std::chrono::seconds ttl() const { return options_.ttl; }

 private:
  struct Redeemed {
    int64_t exp;
    std::string user_key;
  };
  struct Bucket {
    double tokens;
    int64_t at_ms;
  };
  void ForgetExpiredLocked(int64_t now_ms) REQUIRES(mu_);

  const std::string secret_;
  const EventsTicketOptions options_;
  Mutex mu_;
  // Nonce → its ticket's expiry and user, and the same ordered by expiry for forgetting.
  std::unordered_map<std::string, Redeemed> redeemed_ GUARDED_BY(mu_);
  std::set<std::pair<int64_t, std::string>> by_expiry_ GUARDED_BY(mu_);
  // User key → unexpired nonces of theirs in redeemed_.
  std::unordered_map<std::string, size_t> redeemed_per_user_ GUARDED_BY(mu_);
  // User key → tickets left to issue; a bucket full again is forgotten.
  std::unordered_map<std::string, Bucket> issue_buckets_ GUARDED_BY(mu_);
  int64_t buckets_swept_ms_ GUARDED_BY(mu_) = 0;
};

}  // namespace export_center::api
