// Tickets for the task-event stream (api/events_ticket.h,
// docs/http-api.md#post-export-tasksevents-ticket--a-ticket-for-the-event-stream):
// issue and redeem, once; expiry at the ticket's life and at the token's end;
// forgeries; another instance with the same secret; the bounded nonce set.

#include "api/events_ticket.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/auth.h"

namespace export_center::api {
namespace {

constexpr char kSecret[] = "events-ticket-test-secret-0123456789";
constexpr int64_t kNow = 1800000000000;  // Unix ms

Principal Alice() {
  Principal p{"alice", "t1", task::AppCode::kPlatform, {"platform:order:export", "x:y"}};
  p.valid_until_ms = kNow + 3600 * 1000;
  return p;
}

EventsTicketOptions Options(int ttl_seconds = 30, size_t max_redeemed = 10000) {
  EventsTicketOptions o;
  o.ttl = std::chrono::seconds(ttl_seconds);
  o.max_redeemed = max_redeemed;
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
  AuthOptions auth;
  auth.jwt_hs256_secret = kSecret;
  auto jwt = MintToken(auth, Alice(), std::chrono::seconds(60));
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
  auto t2 = tickets.Issue(Alice(), kNow);
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

}  // namespace
}  // namespace export_center::api
