// The producer's broker fault isolation against a real two-broker cluster
// (tests/support/rocketmq_server.h: broker-a and broker-b on one NameServer):
// while broker-b is frozen (SIGSTOP: it accepts connections and answers
// nothing), every send is stored on broker-a and only the first one that met
// broker-b waits; once broker-b is thawed and its isolation is over, sends
// reach it again; the consumer gets every message.

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "rocketmq/admin.h"
#include "rocketmq/cluster_consumer.h"
#include "rocketmq/producer.h"
#include "tests/support/rocketmq_server.h"
#include "tests/support/server_process.h"

namespace export_center::rocketmq {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kTopic = "fault-topic";
constexpr const char* kGroup = "fault-group";
constexpr auto kSendTimeout = seconds(3);  // the center's send-timeout-ms
// Short, so that the test sees the isolation end; production's is 30 s.
constexpr auto kIsolation = seconds(4);

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class BrokerFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = testing::RocketMqServer::Start();
    if (!started.ok()) {
      if (started.status().code() == StatusCode::kUnavailable && !testing::RealServersRequired()) {
        GTEST_SKIP() << started.status().ToString();
      }
      FAIL() << "the test broker did not start: " << started.status().ToString();
    }
    server_ = std::move(started).value();
    Status second = server_->StartSecondBroker();
    ASSERT_TRUE(second.ok()) << second.ToString();
    auto admin = Admin::Start(Options());
    ASSERT_TRUE(admin.ok());
    admin_ = std::move(admin).value();
    for (const std::string& addr : {server_->broker_addr(), server_->second_broker_addr()}) {
      ASSERT_TRUE(admin_->CreateOrUpdateTopic(addr, {kTopic, 4, 4, kPermReadWrite}).ok());
      SubscriptionGroupSpec group;
      group.group = kGroup;
      ASSERT_TRUE(admin_->CreateOrUpdateSubscriptionGroup(addr, group).ok());
    }
    // The NameServer routes the topic to both brokers once they registered it.
    const auto deadline = Clock::now() + seconds(30);
    while (Clock::now() < deadline) {
      auto route = admin_->GetTopicRoute(kTopic);
      if (route.ok() && route->queues.size() == 2) break;
      std::this_thread::sleep_for(milliseconds(100));
    }
    auto route = admin_->GetTopicRoute(kTopic);
    ASSERT_TRUE(route.ok() && route->queues.size() == 2) << "the topic is not on both brokers";
  }

  void TearDown() override {
    admin_.reset();
    server_.reset();  // thaws, then stops all three by their pids
  }

  ClientOptions Options() const {
    ClientOptions o;
    o.namesrv_addrs = {server_->namesrv_addr()};
    o.heartbeat_interval = milliseconds(1000);
    o.route_refresh_interval = milliseconds(2000);
    o.broker_isolation_min = kIsolation;
    o.broker_isolation_max = seconds(30);
    return o;
  }

  // Sends `body` and returns the broker that stored it ("" on failure).
  std::string Send(Producer& producer, const std::string& body) {
    Message m;
    m.topic = kTopic;
    m.body = body;
    m.tags = "T";
    auto r = producer.Send(m, kSendTimeout);
    EXPECT_TRUE(r.ok()) << body << ": " << r.status().ToString();
    if (!r.ok()) return "";
    sent_.insert(body);
    return r->queue.broker_name;
  }

  std::unique_ptr<testing::RocketMqServer> server_;
  std::unique_ptr<Admin> admin_;
  std::set<std::string> sent_;
};

TEST_F(BrokerFaultTest, AFrozenBrokerIsIsolatedAndUsedAgainAfterItThaws) {
  auto started = Producer::Start(Options(), "fault-producer");
  ASSERT_TRUE(started.ok());
  Producer& producer = **started;
  std::map<std::string, int> before;
  for (int i = 0; i < 8; ++i) before[Send(producer, "before-" + std::to_string(i))]++;
  EXPECT_EQ(before["broker-a"], 4);
  EXPECT_EQ(before["broker-b"], 4);

  ASSERT_TRUE(server_->Freeze(/*second=*/true).ok());
  constexpr int kFrozenSends = 40;
  int on_a = 0, slow = 0;
  double slowest = 0;
  const auto frozen_start = Clock::now();
  for (int i = 0; i < kFrozenSends; ++i) {
    const auto start = Clock::now();
    if (Send(producer, "frozen-" + std::to_string(i)) == "broker-a") ++on_a;
    const double took = SecondsSince(start);
    slowest = std::max(slowest, took);
    if (took > 0.5) ++slow;
  }
  const double frozen_total = SecondsSince(frozen_start);
  std::printf(
      "%d sends while broker-b is frozen: %.2f s in all, %d slower than 0.5 s, "
      "slowest %.2f s\n",
      kFrozenSends, frozen_total, slow, slowest);
  EXPECT_EQ(on_a, kFrozenSends) << "every send is stored, on broker-a";
  // Without isolation every other send would meet broker-b: 20 x 3 s failed
  // (or, with only the deadline share, 20 x 1.5 s).
  EXPECT_LT(frozen_total, 10.0);
  EXPECT_LE(slow, 3) << "only the sends that met broker-b before its isolation wait";

  ASSERT_TRUE(server_->Thaw(/*second=*/true).ok());
  const auto thawed = Clock::now();
  double back_after = -1;
  for (int i = 0; SecondsSince(thawed) < 60; ++i) {
    if (Send(producer, "thawed-" + std::to_string(i)) == "broker-b") {
      back_after = SecondsSince(thawed);
      break;
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
  std::printf("broker-b takes sends again %.2f s after the thaw\n", back_after);
  ASSERT_GE(back_after, 0) << "no send reached broker-b within 60 s of the thaw";
  // Its isolation is over: round-robin over both brokers again.
  std::map<std::string, int> after;
  for (int i = 0; i < 8; ++i) after[Send(producer, "after-" + std::to_string(i))]++;
  EXPECT_GT(after["broker-b"], 0);
  EXPECT_GT(after["broker-a"], 0);

  // The consumer (a fresh group starts at each queue's beginning) gets every
  // message. A send that timed out on frozen broker-b was stored there too
  // when it thawed (the request sat in its socket buffer), with the same
  // message id as the retry's copy on broker-a: at most one such copy per
  // slow send, which consumers deduplicate by message id.
  ConsumerOptions co;
  co.client = Options();
  co.group = kGroup;
  co.topic = kTopic;
  co.long_poll_timeout = milliseconds(2000);
  co.rebalance_interval = milliseconds(2000);
  auto consumer = ClusterConsumer::Start(co);
  ASSERT_TRUE(consumer.ok());
  std::map<std::string, int> received;
  std::map<std::string, std::set<std::string>> ids;
  const auto deadline = Clock::now() + seconds(60);
  auto all_received = [&] { return received.size() == sent_.size(); };
  auto take = [&](Clock::time_point until) {
    while (Clock::now() < until) {
      if (auto r = (*consumer)->Take(milliseconds(200))) {
        (*consumer)->Ack(*r);
        received[r->message.body]++;
        ids[r->message.body].insert(r->message.msg_id);
      } else if (all_received() && until == deadline) {
        return;
      }
    }
  };
  take(deadline);
  take(Clock::now() + seconds(3));  // anything more that comes
  EXPECT_EQ(received.size(), sent_.size());
  int duplicated = 0;
  for (const std::string& body : sent_) {
    EXPECT_GE(received[body], 1) << body << " was not received";
    EXPECT_EQ(ids[body].size(), 1u) << body << ": one message id however often it came";
    if (received[body] > 1) ++duplicated;
  }
  std::printf("%zu messages sent, %zu received, %d received twice (late copies on broker-b)\n",
              sent_.size(), received.size(), duplicated);
  EXPECT_LE(duplicated, slow);
  for (const auto& [body, n] : received) EXPECT_LE(n, 2) << body;
}

}  // namespace
}  // namespace export_center::rocketmq
