// Tickets for the task-event stream (api/events_ticket.h,
// docs/http-api.md#post-export-tasksevents-ticket--a-ticket-for-the-event-stream):
// issue and redeem, once; expiry at the ticket's life and at the token's end;
// forgeries; another instance with the same secret; the bounded nonce set;
// that one user can fill neither the set nor the issuer for the others, and
// that a connect refused by the stream caps spends no nonce.

#include "api/events_ticket.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/auth.h"
#include "identity/token_verifier.h"

namespace export_center::api {
namespace {

constexpr char kSecret[] = "events-ticket-test-secret-0123456789";
constexpr int64_t kNow = 1800000000000;  // Unix ms

Principal Alice() {
  Principal p{"alice", "t1", task::AppCode::kPlatform, {"platform:order:export", "x:y"}};
  p.valid_until_ms = kNow + 3600 * 1000;
  return p;
}

Principal Bob() {
  Principal p = Alice();
  p.user = "bob";
  return p;
}

EventsTicketOptions Options(int ttl_seconds = 30, size_t max_redeemed = 10000,
                            size_t max_per_user = 60) {
  EventsTicketOptions o;
  o.ttl = std::chrono::seconds(ttl_seconds);
  o.max_redeemed = max_redeemed;
  o.max_per_user = max_per_user;
  return o;
}

TEST(EventsTicket, RedeemsOnceForTheSamePrincipal) {
  EventsTickets tickets(kSecret, Options());
  auto ticket = tickets.Issue(Alice(), kNow);
  ASSERT_TRUE(ticket.ok()) << ticket.status().ToString();
  auto p = tickets.Redeem(*ticket, kNow + 1000);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->user, "alice");
  EXPECT_EQ(p->tenant, "t1");
  EXPECT_EQ(p->app, task::AppCode::kPlatform);
  EXPECT_EQ(p->perms, Alice().perms);
  EXPECT_EQ(p->valid_until_ms, Alice().valid_until_ms);  // the stream still ends at the token's end

  auto replay = tickets.Redeem(*ticket, kNow + 2000);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(replay.status().message().find("already used"), std::string::npos);
}

TEST(EventsTicket, TwoTicketsAreDistinctAndEachOpensOnce) {
  EventsTickets tickets(kSecret, Options());
  auto a = tickets.Issue(Alice(), kNow);
  auto b = tickets.Issue(Alice(), kNow);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);  // a random nonce each
  EXPECT_TRUE(tickets.Redeem(*a, kNow).ok());
  EXPECT_TRUE(tickets.Redeem(*b, kNow).ok());
  EXPECT_FALSE(tickets.Redeem(*b, kNow).ok());
}

TEST(EventsTicket, ExpiresAfterItsLife) {
  EventsTickets tickets(kSecret, Options(/*ttl_seconds=*/30));
  auto ticket = tickets.Issue(Alice(), kNow);
  ASSERT_TRUE(ticket.ok());
  EXPECT_FALSE(tickets.Redeem(*ticket, kNow + 30000).ok());  // exactly 30 s: gone
  auto fresh = tickets.Issue(Alice(), kNow);
  EXPECT_TRUE(tickets.Redeem(*fresh, kNow + 29999).ok());
  EXPECT_EQ(tickets.ttl(), std::chrono::seconds(30));
}

TEST(EventsTicket, NeverOutlivesTheToken) {
  EventsTickets tickets(kSecret, Options());
  Principal soon = Alice();
  soon.valid_until_ms = kNow + 5000;  // the token ends in 5 s, before the ticket would
  auto ticket = tickets.Issue(soon, kNow);
  ASSERT_TRUE(ticket.ok());
  EXPECT_FALSE(tickets.Redeem(*ticket, kNow + 5000).ok());
  auto again = tickets.Issue(soon, kNow);
  EXPECT_TRUE(tickets.Redeem(*again, kNow + 4999).ok());
}

TEST(EventsTicket, ForgeriesAndOtherSignedValuesAreRefused) {
  EventsTickets tickets(kSecret, Options());
  auto ticket = tickets.Issue(Alice(), kNow);
  ASSERT_TRUE(ticket.ok());
  EventsTickets other(std::string(kSecret) + "x", Options());
  EXPECT_FALSE(other.Redeem(*ticket, kNow).ok());  // another secret
  std::string flipped = *ticket;
  flipped[3] = flipped[3] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(tickets.Redeem(flipped, kNow).ok());
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "abc", "a.b", std::string(20000, 'a') + ".b"}) {
    auto r = tickets.Redeem(bad, kNow);
    ASSERT_FALSE(r.ok()) << bad.substr(0, 20);
    EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated);
  }
  // A JWT signed with the same secret is not a ticket.
  identity::IdentityOptions auth;
  auth.jwt_hs256_secret = kSecret;
  auto jwt = identity::MintToken(auth, Alice(), std::chrono::seconds(60));
  ASSERT_TRUE(jwt.ok());
  EXPECT_FALSE(tickets.Redeem(*jwt, kNow).ok());
}

// The fleet: instances share auth.download-url-secret, so a ticket issued by
// one opens a stream on another (a balancer may split the two requests).
// Single use is per instance.
TEST(EventsTicket, AnotherInstanceWithTheSameSecretAcceptsIt) {
  EventsTickets a(kSecret, Options());
  EventsTickets b(kSecret, Options());
  auto ticket = a.Issue(Alice(), kNow);
  ASSERT_TRUE(ticket.ok());
  EXPECT_TRUE(b.Redeem(*ticket, kNow).ok());
  EXPECT_FALSE(b.Redeem(*ticket, kNow).ok());
}

TEST(EventsTicket, TheUsedSetIsBoundedAndForgetsExpiredTickets) {
  EventsTickets tickets(kSecret, Options(/*ttl_seconds=*/10, /*max_redeemed=*/2));
  auto t1 = tickets.Issue(Alice(), kNow);
  auto t2 = tickets.Issue(Bob(), kNow);
  auto t3 = tickets.Issue(Alice(), kNow);
  ASSERT_TRUE(tickets.Redeem(*t1, kNow).ok());
  ASSERT_TRUE(tickets.Redeem(*t2, kNow).ok());
  // Full of live nonces: refused, not forgotten (t1 must stay spent).
  auto full = tickets.Redeem(*t3, kNow);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(tickets.Redeem(*t1, kNow + 1).ok());
  // Once t1 and t2 expire their nonces go, and new tickets are redeemed.
  auto t4 = tickets.Issue(Alice(), kNow + 10000);
  EXPECT_TRUE(tickets.Redeem(*t4, kNow + 10000).ok());
}

// Item: one user redeeming ticket after ticket must not fill the instance's
// nonce set for everybody else: each user holds at most max_per_user places.
TEST(EventsTicket, OneUserCannotFillTheUsedSetForOthers) {
  EventsTickets issuer(kSecret, Options());
  EventsTickets tickets(kSecret, Options(/*ttl_seconds=*/30, /*max_redeemed=*/10,
                                         /*max_per_user=*/3));
  for (int i = 0; i < 3; ++i) {
    auto t = issuer.Issue(Alice(), kNow);
    ASSERT_TRUE(tickets.Redeem(*t, kNow).ok()) << i;
  }
  auto over = issuer.Issue(Alice(), kNow);
  auto refused = tickets.Redeem(*over, kNow);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(refused.status().message().find("per user"), std::string::npos);
  // Alice in another tenant or app is another user; Bob is untouched.
  Principal other_tenant = Alice();
  other_tenant.tenant = "t2";
  EXPECT_TRUE(tickets.Redeem(*issuer.Issue(other_tenant, kNow), kNow).ok());
  EXPECT_TRUE(tickets.Redeem(*issuer.Issue(Bob(), kNow), kNow).ok());
  // Alice's places come back as her tickets expire; the refused one was not spent.
  EXPECT_TRUE(tickets.Redeem(*issuer.Issue(Alice(), kNow + 30000), kNow + 30000).ok());
}

// Issuing is rate-limited per user: max_per_user per ticket life, refilled
// evenly, each user on their own.
TEST(EventsTicket, IssuingIsRateLimitedPerUser) {
  EventsTickets tickets(kSecret, Options(/*ttl_seconds=*/30, 10000, /*max_per_user=*/3));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tickets.Issue(Alice(), kNow).ok()) << i;
  auto over = tickets.Issue(Alice(), kNow + 1000);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kLimitExceeded);
  EXPECT_TRUE(tickets.Issue(Bob(), kNow + 1000).ok());
  // One ticket back every 10 s (3 per 30 s).
  EXPECT_TRUE(tickets.Issue(Alice(), kNow + 10000).ok());
  EXPECT_FALSE(tickets.Issue(Alice(), kNow + 10001).ok());
  // Idle for a whole life: full again.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(tickets.Issue(Alice(), kNow + 60000).ok()) << i;
}

// The stream caps are asked before the nonce is spent: a refused connect
// neither burns the ticket nor takes a place in the set.
TEST(EventsTicket, ARefusedAdmissionSpendsNoNonce) {
  EventsTickets tickets(kSecret, Options(30, /*max_redeemed=*/1));
  auto t = tickets.Issue(Alice(), kNow);
  int asked = 0;
  auto full = [&](const Principal& p) {
    ++asked;
    EXPECT_EQ(p.user, "alice");
    return Unavailable("too many task event streams on this instance");
  };
  auto refused = tickets.Redeem(*t, kNow, full);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(asked, 1);
  // A forged ticket never reaches the admission.
  EXPECT_FALSE(tickets.Redeem("abc.def", kNow, full).ok());
  EXPECT_EQ(asked, 1);
  // The same ticket still opens once there is room, and the one place was free.
  auto room = [](const Principal&) { return Status::Ok(); };
  EXPECT_TRUE(tickets.Redeem(*t, kNow + 1, room).ok());
  EXPECT_FALSE(tickets.Redeem(*t, kNow + 2, room).ok());
}

}  // namespace
}  // namespace export_center::api
