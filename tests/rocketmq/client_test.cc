// Producer, ClusterConsumer and Admin against a real RocketMQ NameServer +
// broker (tests/support/rocketmq_server.h), one broker for the binary. Each
// test uses its own topic and groups. The broker kill/restart test runs last.
//
// With EC_ROCKETMQ_CORPUS_DIR set, RealPullFramesDecode also writes the raw
// frames and pull bodies it receives there: that is how
// tests/rocketmq/fuzz/corpus/rocketmq_decode_fuzzer/ (the fuzzer's seed corpus) was captured.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "rocketmq/admin.h"
#include "rocketmq/cluster_consumer.h"
#include "rocketmq/producer.h"
#include "rocketmq/remoting/codes.h"
#include "rocketmq/remoting/remoting_command.h"
#include "tests/support/rocketmq_server.h"
#include "tests/support/server_process.h"

namespace export_center::rocketmq {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

class BrokerEnvironment : public ::testing::Environment {
 public:
  static testing::RocketMqServer* Server(std::string* why) {
    std::lock_guard lock(mu_);
    if (!tried_) {
      tried_ = true;
      auto started = testing::RocketMqServer::Start();
      if (started.ok()) {
        server_ = std::move(started).value();
      } else {
        error_ = started.status().ToString();
        unavailable_ = started.status().code() == StatusCode::kUnavailable;
      }
    }
    *why = error_;
    return server_.get();
  }
  static bool Unavailable() { return unavailable_; }
  void TearDown() override {
    std::lock_guard lock(mu_);
    server_.reset();
  }

 private:
  static inline std::mutex mu_;
  static inline bool tried_ = false;
  static inline bool unavailable_ = false;
  static inline std::unique_ptr<testing::RocketMqServer> server_;
  static inline std::string error_;
};

class RocketMqTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    server_ = BrokerEnvironment::Server(&why);
    if (server_ == nullptr) {
      if (BrokerEnvironment::Unavailable() && !testing::RealServersRequired()) {
        GTEST_SKIP() << why;
      }
      FAIL() << "the test broker did not start: " << why;
    }
    auto admin = Admin::Start(Options());
    ASSERT_TRUE(admin.ok());
    admin_ = std::move(admin).value();
  }

  ClientOptions Options() const {
    ClientOptions o;
    o.namesrv_addrs = {server_->namesrv_addr()};
    o.heartbeat_interval = milliseconds(1000);
    o.route_refresh_interval = milliseconds(2000);
    return o;
  }

  ConsumerOptions Consumer(const std::string& group, const std::string& topic) const {
    ConsumerOptions o;
    o.client = Options();
    o.group = group;
    o.topic = topic;
    o.long_poll_timeout = milliseconds(2000);
    o.rebalance_interval = milliseconds(2000);
    o.offset_commit_interval = milliseconds(200);
    return o;
  }

  void CreateTopic(const std::string& topic, int queues = 4, int perm = kPermReadWrite) {
    TopicSpec spec{topic, queues, queues, perm};
    ASSERT_TRUE(admin_->CreateOrUpdateTopic(server_->broker_addr(), spec).ok());
  }
  void CreateGroup(const std::string& group, int retry_max_times = 2) {
    SubscriptionGroupSpec spec;
    spec.group = group;
    spec.retry_max_times = retry_max_times;
    Status s = admin_->CreateOrUpdateSubscriptionGroup(server_->broker_addr(), spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<Producer> StartProducer() {
    auto p = Producer::Start(Options(), "test-producer");
    EXPECT_TRUE(p.ok());
    return std::move(p).value();
  }

  static Message Msg(const std::string& topic, const std::string& body, const std::string& tag) {
    Message m;
    m.topic = topic;
    m.body = body;
    m.tags = tag;
    m.keys = "key-" + body;
    m.user_properties = {{"eventId", "ev-" + body}, {"taskId", body}, {"schemaVersion", "1"}};
    return m;
  }

  // Takes until `n` messages arrived or `timeout` passed; acks each when `ack`.
  static std::vector<Received> TakeN(ClusterConsumer& c, size_t n, milliseconds timeout,
                                     bool ack = true) {
    std::vector<Received> got;
    const auto deadline = Clock::now() + timeout;
    while (got.size() < n && Clock::now() < deadline) {
      if (auto r = c.Take(milliseconds(200))) {
        if (ack) c.Ack(*r);
        got.push_back(std::move(*r));
      }
    }
    return got;
  }

  template <typename F>
  static bool WaitFor(F condition, milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (condition()) return true;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return condition();
  }

  testing::RocketMqServer* server_ = nullptr;
  std::unique_ptr<Admin> admin_;
};

TEST_F(RocketMqTest, AdminCreatesIdempotently) {
  auto brokers = admin_->ListBrokers(testing::RocketMqServer::kClusterName);
  ASSERT_TRUE(brokers.ok()) << brokers.status().ToString();
  ASSERT_EQ(brokers->size(), 1u);
  EXPECT_EQ((*brokers)[0].broker_name, testing::RocketMqServer::kBrokerName);
  EXPECT_EQ((*brokers)[0].addr, server_->broker_addr());
  EXPECT_EQ((*brokers)[0].broker_id, 0);
  EXPECT_EQ(admin_->ListBrokers("NoSuchCluster").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(admin_->GetTopicRoute("admin-missing").status().code(), StatusCode::kNotFound);

  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(admin_->CreateOrUpdateTopic(server_->broker_addr(), {"admin-topic", 4, 4, 6}).ok());
    SubscriptionGroupSpec group;
    group.group = "admin-group";
    group.retry_max_times = 2;
    ASSERT_TRUE(admin_->CreateOrUpdateSubscriptionGroup(server_->broker_addr(), group).ok());
    ASSERT_TRUE(
        admin_->CreateOrUpdateTopic(server_->broker_addr(), {"%DLQ%admin-group", 1, 1, 6}).ok());
  }
  auto route = admin_->GetTopicRoute("admin-topic");
  ASSERT_TRUE(route.ok()) << route.status().ToString();
  ASSERT_EQ(route->queues.size(), 1u);
  EXPECT_EQ(route->queues[0].read_queues, 4);
  EXPECT_EQ(route->queues[0].write_queues, 4);
  EXPECT_EQ(route->queues[0].perm, kPermReadWrite);
  ASSERT_NE(route->MasterAddr(testing::RocketMqServer::kBrokerName), nullptr);
  EXPECT_EQ(*route->MasterAddr(testing::RocketMqServer::kBrokerName), server_->broker_addr());
  auto dlq = admin_->GetTopicRoute("%DLQ%admin-group");
  ASSERT_TRUE(dlq.ok());
  EXPECT_EQ(dlq->queues[0].perm, kPermReadWrite);

  EXPECT_EQ(admin_->CreateOrUpdateTopic(server_->broker_addr(), {"bad topic!", 4, 4, 6}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(admin_->CreateOrUpdateTopic("127.0.0.1:1", {"admin-topic", 4, 4, 6}).code(),
            StatusCode::kUnavailable);
}

TEST_F(RocketMqTest, ProducedMessagesAreConsumedWithTagsKeysAndProperties) {
  CreateTopic("rt-topic");
  CreateGroup("rt-group");
  auto producer = StartProducer();
  // Sent before the group ever consumed: a fresh group starts at the
  // beginning of each queue, so none of these is skipped.
  std::map<std::string, SendResult> sent;
  for (int i = 0; i < 8; ++i) {
    auto r = producer->Send(Msg("rt-topic", std::to_string(i), "EXPORT_TASK"), seconds(5));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->msg_id.size(), 32u);
    sent[std::to_string(i)] = *r;
  }
  ASSERT_TRUE(producer->Send(Msg("rt-topic", "other", "OTHER_TAG"), seconds(5)).ok());
  std::set<int> queues;
  for (const auto& [body, r] : sent) queues.insert(r.queue.queue_id);
  EXPECT_EQ(queues.size(), 4u) << "round-robin over the 4 queues";

  ConsumerOptions options = Consumer("rt-group", "rt-topic");
  options.tag_expression = "EXPORT_TASK";
  auto consumer = ClusterConsumer::Start(options);
  ASSERT_TRUE(consumer.ok());
  std::vector<Received> got = TakeN(**consumer, 8, seconds(30));
  ASSERT_EQ(got.size(), 8u);
  for (const Received& r : got) {
    const MessageExt& m = r.message;
    ASSERT_EQ(sent.count(m.body), 1u) << m.body;
    const SendResult& s = sent[m.body];
    EXPECT_EQ(m.msg_id, s.msg_id);
    EXPECT_EQ(m.offset_msg_id, s.offset_msg_id);
    EXPECT_EQ(m.topic, "rt-topic");
    EXPECT_EQ(m.tags, "EXPORT_TASK");
    EXPECT_EQ(m.keys, "key-" + m.body);
    EXPECT_EQ(m.broker_name, testing::RocketMqServer::kBrokerName);
    EXPECT_EQ(m.queue_id, s.queue.queue_id);
    EXPECT_EQ(m.queue_offset, s.queue_offset);
    EXPECT_EQ(r.delivery_count(), 1);
    EXPECT_EQ(m.UserProperties(),
              (std::map<std::string, std::string>{
                  {"eventId", "ev-" + m.body}, {"taskId", m.body}, {"schemaVersion", "1"}}));
  }
  // The OTHER_TAG message is filtered out; nothing else comes.
  EXPECT_FALSE((*consumer)->Take(milliseconds(1500)).has_value());
}

TEST_F(RocketMqTest, SendRefusesBadMessagesAndMissingTopics) {
  auto producer = StartProducer();
  EXPECT_EQ(producer->Send(Msg("no-such-topic", "x", "T"), seconds(3)).status().code(),
            StatusCode::kNotFound);
  Message reserved = Msg("rt-topic", "x", "T");
  reserved.user_properties["TAGS"] = "sneaky";
  EXPECT_EQ(producer->Send(reserved, seconds(3)).status().code(), StatusCode::kInvalidArgument);
  Message separator = Msg("rt-topic", "x", "T");
  separator.user_properties["a"] = std::string("b\x01", 2);
  EXPECT_EQ(producer->Send(separator, seconds(3)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(producer->Send(Msg("rt-topic", "", "T"), seconds(3)).status().code(),
            StatusCode::kInvalidArgument);
  producer->Shutdown();
  EXPECT_EQ(producer->Send(Msg("rt-topic", "x", "T"), seconds(3)).status().code(),
            StatusCode::kUnavailable);
}

TEST_F(RocketMqTest, TwoConsumersOfAGroupSplitTheQueuesAndTakeEachMessageOnce) {
  CreateTopic("split-topic");
  CreateGroup("split-group");
  auto a = ClusterConsumer::Start(Consumer("split-group", "split-topic"));
  auto b = ClusterConsumer::Start(Consumer("split-group", "split-topic"));
  ASSERT_TRUE(a.ok() && b.ok());
  auto main_queues = [](ClusterConsumer& c) {
    std::vector<MessageQueue> q;
    for (const MessageQueue& mq : c.AssignedQueues()) {
      if (mq.topic == "split-topic") q.push_back(mq);
    }
    return q;
  };
  ASSERT_TRUE(WaitFor([&] { return main_queues(**a).size() == 2 && main_queues(**b).size() == 2; },
                      seconds(30)))
      << "a has " << main_queues(**a).size() << ", b has " << main_queues(**b).size();
  std::set<MessageQueue> all;
  for (const auto& q : main_queues(**a)) all.insert(q);
  for (const auto& q : main_queues(**b)) all.insert(q);
  EXPECT_EQ(all.size(), 4u) << "disjoint halves";

  auto producer = StartProducer();
  constexpr int kMessages = 40;
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(producer->Send(Msg("split-topic", std::to_string(i), "T"), seconds(5)).ok());
  }
  std::mutex mu;
  std::map<std::string, int> taken;
  std::map<std::string, int> per_consumer;
  auto drain = [&](ClusterConsumer& c, const std::string& name) {
    const auto deadline = Clock::now() + seconds(30);
    while (Clock::now() < deadline) {
      {
        std::lock_guard lock(mu);
        if (static_cast<int>(taken.size()) == kMessages) break;
      }
      if (auto r = c.Take(milliseconds(200))) {
        c.Ack(*r);
        std::lock_guard lock(mu);
        taken[r->message.body]++;
        per_consumer[name]++;
      }
    }
  };
  std::thread ta([&] { drain(**a, "a"); });
  std::thread tb([&] { drain(**b, "b"); });
  ta.join();
  tb.join();
  ASSERT_EQ(static_cast<int>(taken.size()), kMessages);
  for (const auto& [body, n] : taken) EXPECT_EQ(n, 1) << body;
  EXPECT_GT(per_consumer["a"], 0);
  EXPECT_GT(per_consumer["b"], 0);
  // and nothing more arrives at either
  EXPECT_FALSE((*a)->Take(milliseconds(500)).has_value());
  EXPECT_FALSE((*b)->Take(milliseconds(500)).has_value());

  // When b leaves, a takes over all four queues.
  (*b)->Shutdown();
  EXPECT_TRUE(WaitFor([&] { return main_queues(**a).size() == 4; }, seconds(30)));
}

TEST_F(RocketMqTest, ARestartedConsumerResumesFromTheCommittedOffset) {
  CreateTopic("resume-topic", 1);
  CreateGroup("resume-group");
  auto producer = StartProducer();
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(producer->Send(Msg("resume-topic", std::to_string(i), "T"), seconds(5)).ok());
  }
  {
    auto first = ClusterConsumer::Start(Consumer("resume-group", "resume-topic"));
    ASSERT_TRUE(first.ok());
    std::vector<Received> got = TakeN(**first, 6, seconds(30), /*ack=*/false);
    ASSERT_EQ(got.size(), 6u);
    for (const Received& r : got) {
      if (r.message.queue_offset < 3) (*first)->Ack(r);  // 3, 4, 5 stay un-acked
    }
    (*first)->Shutdown();  // commits offset 3: everything below it is done
  }
  const MessageQueue queue{"resume-topic", testing::RocketMqServer::kBrokerName, 0};
  auto committed = admin_->QueryConsumerOffset("resume-group", queue);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(*committed, 3);

  auto second = ClusterConsumer::Start(Consumer("resume-group", "resume-topic"));
  ASSERT_TRUE(second.ok());
  std::vector<Received> again = TakeN(**second, 3, seconds(30));
  ASSERT_EQ(again.size(), 3u);
  std::set<int64_t> offsets;
  for (const Received& r : again) offsets.insert(r.message.queue_offset);
  EXPECT_EQ(offsets, (std::set<int64_t>{3, 4, 5}));
  EXPECT_FALSE((*second)->Take(milliseconds(1000)).has_value()) << "acked ones are not redelivered";
  // Acks move the committed offset to the end.
  EXPECT_TRUE(WaitFor(
      [&] {
        auto o = admin_->QueryConsumerOffset("resume-group", queue);
        return o.ok() && *o == 6;
      },
      seconds(10)));
}

TEST_F(RocketMqTest, SentBackMessagesReachTheDlqAfterMaxReconsumeTimes) {
  CreateTopic("poison-topic");
  CreateGroup("poison-group", /*retry_max_times=*/2);
  CreateTopic("%DLQ%poison-group", 1, kPermReadWrite);
  CreateGroup("poison-dlq-handler", /*retry_max_times=*/1000000);
  auto producer = StartProducer();
  auto sent = producer->Send(Msg("poison-topic", "not json", "EXPORT_TASK"), seconds(5));
  ASSERT_TRUE(sent.ok());

  auto worker = ClusterConsumer::Start(Consumer("poison-group", "poison-topic"));
  ASSERT_TRUE(worker.ok());
  // First delivery and two redeliveries (maxReconsumeTimes = 2), each sent
  // back; the third send-back moves it to %DLQ%.
  for (int delivery = 1; delivery <= 3; ++delivery) {
    auto r = (*worker)->Take(seconds(30));
    ASSERT_TRUE(r.has_value()) << "delivery " << delivery;
    EXPECT_EQ(r->delivery_count(), delivery);
    EXPECT_EQ(r->message.msg_id, sent->msg_id);
    EXPECT_EQ(r->message.topic, "poison-topic") << "the original topic, also from %RETRY%";
    EXPECT_EQ(r->message.body, "not json");
    Status s = (*worker)->SendBack(*r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_FALSE((*worker)->Take(milliseconds(3000)).has_value()) << "no fourth delivery";

  ConsumerOptions dlq_options = Consumer("poison-dlq-handler", "%DLQ%poison-group");
  auto handler = ClusterConsumer::Start(dlq_options);
  ASSERT_TRUE(handler.ok());
  auto dead = (*handler)->Take(seconds(30));
  ASSERT_TRUE(dead.has_value());
  EXPECT_EQ(dead->message.msg_id, sent->msg_id);
  EXPECT_EQ(dead->message.stored_topic, "%DLQ%poison-group");
  EXPECT_EQ(dead->message.body, "not json");
  EXPECT_EQ(dead->message.keys, "key-not json");
  EXPECT_EQ(dead->message.UserProperties(),
            (std::map<std::string, std::string>{
                {"eventId", "ev-not json"}, {"taskId", "not json"}, {"schemaVersion", "1"}}));
  (*handler)->Ack(*dead);
}

// One message at a time, from Send() to Take() returning it: the latency a
// command sees through the broker when nothing else is queued.
TEST_F(RocketMqTest, SendToTakeLatency) {
  CreateTopic("latency-topic");
  CreateGroup("latency-group");
  auto producer = StartProducer();
  auto consumer = ClusterConsumer::Start(Consumer("latency-group", "latency-topic"));
  ASSERT_TRUE(consumer.ok());
  // Wait until the consumer owns all four queues and pulls them.
  ASSERT_TRUE(producer->Send(Msg("latency-topic", "warm-up", "T"), seconds(5)).ok());
  ASSERT_EQ(TakeN(**consumer, 1, seconds(30)).size(), 1u);
  std::vector<double> ms;
  for (int i = 0; i < 200; ++i) {
    const auto start = Clock::now();
    ASSERT_TRUE(producer->Send(Msg("latency-topic", std::to_string(i), "T"), seconds(5)).ok());
    auto r = (*consumer)->Take(seconds(10));
    ASSERT_TRUE(r.has_value());
    (*consumer)->Ack(*r);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const double p50 = ms[ms.size() / 2], p99 = ms[ms.size() * 99 / 100];
  std::printf("send->take latency over %zu messages: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              ms.size(), p50, p99, ms.back());
  // Long-poll pulls are woken by the message's arrival, not by a poll tick.
  EXPECT_LT(p50, 100.0);
}

// A blocking one-request exchange on a fresh socket, returning the raw
// response frame (length prefix included).
std::string RawExchange(const std::string& addr, const remoting::RemotingCommand& request) {
  const int port = std::stoi(addr.substr(addr.find(':') + 1));
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string frame;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    const std::string out = remoting::EncodeFrame(request);
    if (write(fd, out.data(), out.size()) == static_cast<ssize_t>(out.size())) {
      char buf[65536];
      while (true) {
        if (frame.size() >= 4) {
          const uint32_t len = (static_cast<unsigned char>(frame[0]) << 24) |
                               (static_cast<unsigned char>(frame[1]) << 16) |
                               (static_cast<unsigned char>(frame[2]) << 8) |
                               static_cast<unsigned char>(frame[3]);
          if (frame.size() >= 4 + static_cast<size_t>(len)) break;
        }
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        frame.append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  return frame;
}

// A PULL_MESSAGE of up to `max` messages of queue 0 at `offset`, without
// suspending and without committing an offset.
remoting::RemotingCommand PullRequest(const std::string& group, const std::string& topic,
                                      int64_t offset, int max) {
  remoting::RemotingCommand pull =
      remoting::RemotingCommand::Request(remoting::request_code::kPullMessage);
  pull.opaque = 1;
  pull.Set("consumerGroup", group)
      .Set("topic", topic)
      .Set("queueId", 0)
      .Set("queueOffset", offset)
      .Set("maxMsgNums", max)
      .Set("sysFlag", 1 << 2)
      .Set("commitOffset", 0)
      .Set("suspendTimeoutMillis", 0)
      .Set("subscription", "*")
      .Set("subVersion", 0)
      .Set("expressionType", "TAG");
  return pull;
}

// The response to `request` on a fresh connection to `addr`, decoded.
StatusOr<remoting::RemotingCommand> RawInvoke(const std::string& addr,
                                              const remoting::RemotingCommand& request) {
  const std::string frame = RawExchange(addr, request);
  if (frame.size() <= 8) return Unavailable("no answer from " + addr);
  return remoting::DecodeFrame(std::string_view(frame).substr(4));
}

// A stored record the decoder refuses (its magic code corrupted in the
// broker's commit log) sits between good ones on a queue. The consumer pulls
// the batch again one message at a time, so the good one before the bad one
// in the same batch arrives; the bad one is pulled alone
// undecodable_max_pulls times, then skipped and reported once; the ones
// after it arrive; the committed offset moves past all five.
TEST_F(RocketMqTest, AnUndecodableMessageIsSkippedAfterItsPullsAndTheOthersArrive) {
  CreateTopic("undecodable-topic", 1);
  CreateGroup("undecodable-group");
  CreateGroup("undecodable-probe");
  auto producer = StartProducer();
  const std::vector<std::string> bodies = {"good-0", "the-undecodable-one", "good-1", "good-2",
                                           "good-3"};
  std::vector<SendResult> sent;
  for (const std::string& body : bodies) {
    auto r = producer->Send(Msg("undecodable-topic", body, "EXPORT_TASK"), seconds(5));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    sent.push_back(*r);
  }
  // The broker reads each record again when it indexes it into the consume
  // queue, asynchronously: corrupt the record only once all five are indexed.
  const remoting::RemotingCommand probe =
      PullRequest("undecodable-probe", "undecodable-topic", 0, 32);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = RawInvoke(server_->broker_addr(), probe);
        if (!r.ok() || r->code != 0) return false;
        auto next = r->ExtInt("nextBeginOffset");
        return next.ok() && *next == 5;
      },
      seconds(10)));
  // offset_msg_id: store host ip (8 hex digits), port (8), commit log offset (16).
  const int64_t bad_commit_log_offset =
      static_cast<int64_t>(std::stoull(sent[1].offset_msg_id.substr(16), nullptr, 16));
  auto found = server_->CommitLogOffsetOfBody("the-undecodable-one");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, bad_commit_log_offset) << "the search other tests use finds the same record";
  auto corruption = server_->CorruptRecord(bad_commit_log_offset, /*at=*/4);  // the magic code
  ASSERT_TRUE(corruption.ok()) << corruption.status().ToString();
  {
    auto r = RawInvoke(server_->broker_addr(),
                       PullRequest("undecodable-probe", "undecodable-topic", 0, 32));
    ASSERT_TRUE(r.ok() && r->code == 0);
    auto decoded = DecodeMessages(r->body);
    ASSERT_FALSE(decoded.ok()) << "the broker serves the corrupted record as it is stored";
    EXPECT_NE(decoded.status().message().find("magic code"), std::string::npos)
        << decoded.status().ToString();
  }

  std::mutex mu;
  std::vector<UndecodableSkip> skips;
  ConsumerOptions options = Consumer("undecodable-group", "undecodable-topic");
  options.tag_expression = "EXPORT_TASK";
  options.undecodable_max_pulls = 3;
  options.on_undecodable_skipped = [&](const UndecodableSkip& skip) {
    std::lock_guard lock(mu);
    skips.push_back(skip);
  };
  auto consumer = ClusterConsumer::Start(options);
  ASSERT_TRUE(consumer.ok());
  std::vector<Received> got = TakeN(**consumer, 4, seconds(30));
  std::vector<std::string> got_bodies;
  for (const Received& r : got) got_bodies.push_back(r.message.body);
  EXPECT_EQ(got_bodies, (std::vector<std::string>{"good-0", "good-1", "good-2", "good-3"}));
  EXPECT_FALSE((*consumer)->Take(milliseconds(1500)).has_value()) << "the bad one never comes";
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(skips.size(), 1u) << "skipped and reported once";
    EXPECT_EQ(skips[0].queue.topic, "undecodable-topic");
    EXPECT_EQ(skips[0].queue.queue_id, 0);
    EXPECT_EQ(skips[0].queue_offset, sent[1].queue_offset);
    EXPECT_EQ(skips[0].pulls, 3);
    EXPECT_NE(skips[0].error.find("magic code"), std::string::npos) << skips[0].error;
  }
  const MessageQueue queue{"undecodable-topic", testing::RocketMqServer::kBrokerName, 0};
  EXPECT_TRUE(WaitFor(
      [&] {
        auto o = admin_->QueryConsumerOffset("undecodable-group", queue);
        return o.ok() && *o == 5;
      },
      seconds(10)))
      << "the committed offset moves past the skipped message";
}

// A pull answered by the real broker decodes into exactly what was sent.
TEST_F(RocketMqTest, RealPullFramesDecode) {
  CreateTopic("frames-topic", 1);
  CreateGroup("frames-group");
  auto producer = StartProducer();
  std::vector<SendResult> sent;
  for (int i = 0; i < 5; ++i) {
    Message m = Msg("frames-topic", std::string(i * 50 + 1, static_cast<char>('a' + i)),
                    "T" + std::to_string(i));
    auto r = producer->Send(m, seconds(5));
    ASSERT_TRUE(r.ok());
    sent.push_back(*r);
  }
  const remoting::RemotingCommand pull = PullRequest("frames-group", "frames-topic", 0, 32);
  // The broker writes its consume queue from the commit log asynchronously, so
  // right after the sends a pull may see fewer than 5: pull again until it has all.
  std::string frame;
  StatusOr<remoting::RemotingCommand> response = Internal("not pulled yet");
  for (const auto deadline = Clock::now() + seconds(10); Clock::now() < deadline;) {
    frame = RawExchange(server_->broker_addr(), pull);
    ASSERT_GT(frame.size(), 8u);
    response = remoting::DecodeFrame(std::string_view(frame).substr(4));
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    if (response->code == 0 && response->ExtInt("nextBeginOffset").value() == 5) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_EQ(response->code, 0) << response->Describe();
  EXPECT_EQ(response->ExtInt("nextBeginOffset").value(), 5);
  auto messages = DecodeMessages(response->body);
  ASSERT_TRUE(messages.ok()) << messages.status().ToString();
  ASSERT_EQ(messages->size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((*messages)[i].msg_id, sent[i].msg_id);
    EXPECT_EQ((*messages)[i].offset_msg_id, sent[i].offset_msg_id);
    EXPECT_EQ((*messages)[i].queue_offset, static_cast<int64_t>(i));
    EXPECT_EQ((*messages)[i].tags, "T" + std::to_string(i));
    EXPECT_EQ((*messages)[i].body.size(), i * 50 + 1);
  }

  if (const char* dir = std::getenv("EC_ROCKETMQ_CORPUS_DIR")) {
    auto save = [&](const std::string& name, const std::string& bytes) {
      std::ofstream(std::string(dir) + "/" + name, std::ios::binary) << bytes;
    };
    save("pull-response.frame", frame);
    save("pull-response.body", response->body);
    const std::string& body = response->body;
    const uint32_t first =
        (static_cast<unsigned char>(body[0]) << 24) | (static_cast<unsigned char>(body[1]) << 16) |
        (static_cast<unsigned char>(body[2]) << 8) | static_cast<unsigned char>(body[3]);
    save("one-message.body", body.substr(0, first));
    remoting::RemotingCommand route =
        remoting::RemotingCommand::Request(remoting::request_code::kGetRouteInfoByTopic);
    route.Set("topic", "frames-topic");
    save("route-response.frame", RawExchange(server_->namesrv_addr(), route));
    save("cluster-info-response.frame",
         RawExchange(server_->namesrv_addr(), remoting::RemotingCommand::Request(
                                                  remoting::request_code::kGetBrokerClusterInfo)));
    remoting::RemotingCommand empty_pull = pull;
    empty_pull.Set("queueOffset", 5);
    save("pull-not-found.frame", RawExchange(server_->broker_addr(), empty_pull));
    remoting::RemotingCommand unknown = remoting::RemotingCommand::Request(9999);
    save("unsupported-code.frame", RawExchange(server_->broker_addr(), unknown));
  }
}

// Last: it kills the broker.
TEST_F(RocketMqTest, ZzBrokerKillAndRestart) {
  CreateTopic("crash-topic");
  CreateGroup("crash-group");
  auto producer = StartProducer();
  auto consumer = ClusterConsumer::Start(Consumer("crash-group", "crash-topic"));
  ASSERT_TRUE(consumer.ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        producer->Send(Msg("crash-topic", "before-" + std::to_string(i), "T"), seconds(5)).ok());
  }
  ASSERT_EQ(TakeN(**consumer, 4, seconds(30)).size(), 4u);

  ASSERT_TRUE(server_->Kill().ok());
  auto down = producer->Send(Msg("crash-topic", "while-down", "T"), seconds(2));
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable) << down.status().ToString();

  ASSERT_TRUE(server_->Restart().ok());
  std::set<std::string> after;
  const auto deadline = Clock::now() + seconds(60);
  for (int i = 0; i < 4 && Clock::now() < deadline;) {
    const std::string body = "after-" + std::to_string(i);
    if (producer->Send(Msg("crash-topic", body, "T"), seconds(3)).ok()) {
      after.insert(body);
      ++i;
    } else {
      std::this_thread::sleep_for(milliseconds(200));
    }
  }
  ASSERT_EQ(after.size(), 4u) << "the producer works again after the restart";
  // The consumer reconnects and resumes: every message sent after the restart
  // arrives (some from before may arrive again: at-least-once).
  std::set<std::string> seen;
  while (Clock::now() < deadline &&
         !std::includes(seen.begin(), seen.end(), after.begin(), after.end())) {
    if (auto r = (*consumer)->Take(milliseconds(200))) {
      (*consumer)->Ack(*r);
      seen.insert(r->message.body);
    }
  }
  for (const std::string& body : after) EXPECT_EQ(seen.count(body), 1u) << body;
}

}  // namespace
}  // namespace export_center::rocketmq

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new export_center::rocketmq::BrokerEnvironment());
  return RUN_ALL_TESTS();
}
