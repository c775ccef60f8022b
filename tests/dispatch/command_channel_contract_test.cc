// The CommandChannel contract (dispatch/command_channel.h), run against every
// backend: the in-process queue, and RocketMQ on a real broker when built
// with it. What a consumer and the DLQ handler rely on — at-least-once, the
// properties beside the payload, redelivery of a rejected command up to the
// delivery limit, dead letters never dropped, Close waking the blocked — is
// asserted here once for all of them.

#include "command_channel_contract.h"  // beside this test

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "dispatch/embedded_command_channel.h"

namespace export_center::dispatch {

#ifdef EXPORT_CENTER_WITH_ROCKETMQ
// rocketmq/rocketmq_channel_backend.cc: a real broker for the whole binary.
std::unique_ptr<ChannelBackend> NewRocketMqChannelBackend();
// The same on a broker with ACL 2.0 on, every request signed.
std::unique_ptr<ChannelBackend> NewRocketMqAclChannelBackend();
#endif

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class EmbeddedBackend final : public ChannelBackend {
 public:
  void Reset(int delivery_limit) override { delivery_limit_ = delivery_limit; }
  std::unique_ptr<CommandChannel> Open() override {
    return NewEmbeddedCommandChannel(delivery_limit_);
  }
  bool SharesQueues() const override { return false; }
  std::chrono::milliseconds RedeliveryBound() const override { return 1s; }
  std::chrono::milliseconds QuietWindow() const override { return 50ms; }

 private:
  int delivery_limit_ = 3;
};

struct BackendParam {
  std::string name;
  std::function<std::unique_ptr<ChannelBackend>()> make;
  bool shares_queues = false;  // as ChannelBackend::SharesQueues, known before starting it
};

// One backend per binary run: a broker is started once, not per test.
ChannelBackend& BackendFor(const BackendParam& param) {
  static std::map<std::string, std::unique_ptr<ChannelBackend>> backends;
  auto& backend = backends[param.name];
  if (!backend) backend = param.make();
  return *backend;
}

task::CommandProperties PropertiesFor(int64_t task_id) {
  return {{"eventId", "ev-" + std::to_string(task_id)},
          {"taskId", std::to_string(task_id)},
          {"dispatchVersion", "1"},
          {"schemaVersion", "1"}};
}

const DeliveryOutcome kAck = DeliveryOutcome::kAck;
const DeliveryOutcome kReject = DeliveryOutcome::kReject;

class CommandChannelContract : public ::testing::TestWithParam<BackendParam> {
 protected:
  ChannelBackend& backend() {
    ChannelBackend& b = BackendFor(GetParam());
    EXPECT_EQ(b.SharesQueues(), GetParam().shares_queues);
    return b;
  }

  std::unique_ptr<CommandChannel> Fresh(int delivery_limit) {
    backend().Reset(delivery_limit);
    return backend().Open();
  }

  // Calls ConsumeOne until one delivery was handled or `bound` passed.
  // Returns whether one was handled.
  static bool TakeOne(CommandChannel& channel, std::chrono::milliseconds bound,
                      const std::function<DeliveryOutcome(const Delivery&)>& handler) {
    const auto deadline = Clock::now() + bound;
    while (Clock::now() < deadline) {
      if (channel.ConsumeOne(100ms, handler)) return true;
    }
    return false;
  }

  static bool TakeDeadLetter(CommandChannel& channel, std::chrono::milliseconds bound,
                             const std::function<DeliveryOutcome(const Delivery&)>& handler) {
    const auto deadline = Clock::now() + bound;
    while (Clock::now() < deadline) {
      if (channel.ConsumeDeadLetter(100ms, handler)) return true;
    }
    return false;
  }

  // Asserts that nothing is delivered (command or dead letter) for the quiet window.
  void ExpectQuiet(CommandChannel& channel, const std::string& why) {
    const auto deadline = Clock::now() + backend().QuietWindow();
    do {
      EXPECT_FALSE(channel.ConsumeOne(20ms, [&](const Delivery& d) {
        ADD_FAILURE() << why << ": unexpected delivery " << d.payload;
        return kAck;
      }));
      EXPECT_FALSE(channel.ConsumeDeadLetter(20ms, [&](const Delivery& d) {
        ADD_FAILURE() << why << ": unexpected dead letter " << d.payload;
        return kAck;
      }));
    } while (Clock::now() < deadline);
  }
};

TEST_P(CommandChannelContract, DeliversPayloadAndProperties) {
  auto channel = Fresh(3);
  const std::string payload = R"({"schemaVersion":1,"taskId":"7","note":"导出 ✓"})";
  ASSERT_TRUE(channel->Publish(payload, PropertiesFor(7)).ok());
  Delivery seen;
  ASSERT_TRUE(TakeOne(*channel, backend().RedeliveryBound(), [&](const Delivery& d) {
    seen = d;
    return kAck;
  }));
  EXPECT_EQ(seen.payload, payload);
  EXPECT_EQ(seen.properties.at("taskId"), "7");
  EXPECT_EQ(seen.properties.at("eventId"), "ev-7");
  EXPECT_EQ(seen.properties.at("dispatchVersion"), "1");
  EXPECT_EQ(seen.properties.at("schemaVersion"), "1");
  EXPECT_EQ(seen.delivery_count, 1);
  EXPECT_FALSE(seen.message_id.empty());
  ExpectQuiet(*channel, "an acknowledged command is gone");
}

TEST_P(CommandChannelContract, PoisonBodyKeepsItsProperties) {
  // A body that is not even UTF-8: the properties must still locate the task.
  auto channel = Fresh(3);
  const std::string poison("{\"schemaVersion\": 1, \"taskId\": \xff\xfe\x00 broken", 40);
  ASSERT_TRUE(channel->Publish(poison, PropertiesFor(11)).ok());
  Delivery seen;
  ASSERT_TRUE(TakeOne(*channel, backend().RedeliveryBound(), [&](const Delivery& d) {
    seen = d;
    return kAck;
  }));
  EXPECT_EQ(seen.payload, poison);
  EXPECT_EQ(seen.properties, PropertiesFor(11));
}

TEST_P(CommandChannelContract, RejectedCommandIsRedeliveredThenDeadLettered) {
  auto channel = Fresh(3);
  ASSERT_TRUE(channel->Publish("{broken", PropertiesFor(9)).ok());
  std::vector<int> counts;
  std::set<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(TakeOne(*channel, backend().RedeliveryBound(),
                        [&](const Delivery& d) {
                          counts.push_back(d.delivery_count);
                          ids.insert(d.message_id);
                          EXPECT_EQ(d.payload, "{broken");
                          EXPECT_EQ(d.properties.at("taskId"), "9");
                          return kReject;
                        }))
        << "delivery " << i + 1 << " did not come";
  }
  EXPECT_EQ(counts, (std::vector<int>{1, 2, 3}));
  Delivery dead;
  ASSERT_TRUE(TakeDeadLetter(*channel, backend().RedeliveryBound(), [&](const Delivery& d) {
    dead = d;
    return kAck;
  }));
  EXPECT_EQ(dead.payload, "{broken");
  EXPECT_EQ(dead.properties, PropertiesFor(9));
  EXPECT_EQ(dead.delivery_count, 3) << "the deliveries it had before it was dead-lettered";
  EXPECT_FALSE(ids.empty());
  EXPECT_TRUE(ids.count(dead.message_id)) << "one message id from first delivery to dead letter";
  EXPECT_FALSE(dead.message_id.empty());
  ExpectQuiet(*channel, "an acknowledged dead letter is gone, and no fourth delivery");
}

TEST_P(CommandChannelContract, DeliveryLimitOfOneDeadLettersAtOnce) {
  auto channel = Fresh(1);
  ASSERT_TRUE(channel->Publish("{broken", PropertiesFor(10)).ok());
  ASSERT_TRUE(TakeOne(*channel, backend().RedeliveryBound(), [](const Delivery& d) {
    EXPECT_EQ(d.delivery_count, 1);
    return kReject;
  }));
  ASSERT_TRUE(TakeDeadLetter(*channel, backend().RedeliveryBound(), [](const Delivery& d) {
    EXPECT_EQ(d.properties.at("taskId"), "10");
    EXPECT_EQ(d.delivery_count, 1);
    return kAck;
  }));
  ExpectQuiet(*channel, "one delivery only");
}

TEST_P(CommandChannelContract, RejectedDeadLetterIsHandedOverAgain) {
  auto channel = Fresh(1);
  ASSERT_TRUE(channel->Publish("{broken", PropertiesFor(12)).ok());
  ASSERT_TRUE(
      TakeOne(*channel, backend().RedeliveryBound(), [](const Delivery&) { return kReject; }));
  std::vector<std::string> payloads;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(TakeDeadLetter(*channel, backend().RedeliveryBound(),
                               [&](const Delivery& d) {
                                 payloads.push_back(d.payload);
                                 EXPECT_EQ(d.properties, PropertiesFor(12));
                                 return i < 2 ? kReject : kAck;
                               }))
        << "dead letter dropped after handover " << i;
  }
  EXPECT_EQ(payloads, (std::vector<std::string>(3, "{broken")));
  ExpectQuiet(*channel, "an acknowledged dead letter is gone");
}

TEST_P(CommandChannelContract, ManyCommandsOverSeveralConsumerThreadsEachHandledOnce) {
  auto channel = Fresh(3);
  constexpr int kCommands = 200;
  constexpr int kThreads = 4;
  for (int i = 0; i < kCommands; ++i) {
    ASSERT_TRUE(channel->Publish("cmd-" + std::to_string(i), PropertiesFor(1000 + i)).ok());
  }
  std::mutex mu;
  std::map<std::string, int> seen;
  std::atomic<int> handled{0};
  const auto deadline = Clock::now() + backend().RedeliveryBound() + 30s;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (handled.load() < kCommands && Clock::now() < deadline) {
        channel->ConsumeOne(100ms, [&](const Delivery& d) {
          std::lock_guard lock(mu);
          EXPECT_EQ("cmd-" + std::to_string(std::stoll(d.properties.at("taskId")) - 1000),
                    d.payload)
              << "properties travel with their own payload";
          ++seen[d.payload];
          ++handled;
          return kAck;
        });
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kCommands)) << "every command delivered";
  for (const auto& [payload, n] : seen) EXPECT_EQ(n, 1) << payload << " delivered twice";
  ExpectQuiet(*channel, "all acknowledged");
}

// Backends whose queues outlive a channel and are shared by several (a
// broker): what several processes of one deployment rely on. The in-process
// queue is not one (its commands die with the process; the outbox re-sends).
class SharedQueueContract : public CommandChannelContract {};

TEST_P(SharedQueueContract, SecondChannelSharesTheWork) {
  auto first = Fresh(3);
  auto second = backend().Open();
  // Both join before anything is sent. While members join, a queue may
  // briefly have two owners (at-least-once allows the duplicate that makes);
  // once the group is settled every command goes to one member only.
  const auto settle = Clock::now() + 3s;
  while (Clock::now() < settle) {
    for (CommandChannel* c : {first.get(), second.get()}) {
      EXPECT_FALSE(c->ConsumeOne(100ms, [](const Delivery& d) {
        ADD_FAILURE() << "nothing was sent yet: " << d.payload;
        return kAck;
      }));
    }
  }
  constexpr int kCommands = 40;
  for (int i = 0; i < kCommands; ++i) {
    ASSERT_TRUE(first->Publish("c" + std::to_string(i), PropertiesFor(2000 + i)).ok());
  }
  std::mutex mu;
  std::map<std::string, int> seen;
  std::map<int, int> per_channel;
  const auto deadline = Clock::now() + backend().RedeliveryBound() + 60s;
  auto all_seen = [&] {
    std::lock_guard lock(mu);
    return seen.size() == static_cast<size_t>(kCommands);
  };
  auto run = [&](CommandChannel* channel, int which) {
    while (!all_seen() && Clock::now() < deadline) {
      channel->ConsumeOne(100ms, [&](const Delivery& d) {
        {
          std::lock_guard lock(mu);
          ++seen[d.payload];
          ++per_channel[which];
        }
        std::this_thread::sleep_for(20ms);  // a little work, so both stay busy
        return kAck;
      });
    }
  };
  std::thread a(run, first.get(), 1), b(run, second.get(), 2);
  a.join();
  b.join();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kCommands)) << "every command delivered";
  for (const auto& [payload, n] : seen) EXPECT_EQ(n, 1) << payload << " delivered twice";
  EXPECT_GT(per_channel[1], 0) << "the first channel got no queue";
  EXPECT_GT(per_channel[2], 0) << "the second channel got no queue";
}

TEST_P(SharedQueueContract, UnacknowledgedCommandSurvivesTheChannel) {
  auto first = Fresh(3);
  ASSERT_TRUE(first->Publish("acked", PropertiesFor(31)).ok());
  ASSERT_TRUE(TakeOne(*first, backend().RedeliveryBound(), [](const Delivery& d) {
    EXPECT_EQ(d.payload, "acked");
    return kAck;
  }));
  first->Close();
  first.reset();
  // Published while no consumer runs: the next process takes it, and only it.
  auto producer = backend().Open();
  ASSERT_TRUE(producer->Publish("waiting", PropertiesFor(32)).ok());
  producer->Close();
  producer.reset();
  auto next = backend().Open();
  std::vector<std::string> seen;
  ASSERT_TRUE(TakeOne(*next, backend().RedeliveryBound() + 20s, [&](const Delivery& d) {
    seen.push_back(d.payload);
    return kAck;
  }));
  ExpectQuiet(*next, "the acknowledged command is not redelivered");
  EXPECT_EQ(seen, (std::vector<std::string>{"waiting"}));
}

TEST_P(CommandChannelContract, CloseWakesBlockedConsumers) {
  auto channel = Fresh(1);
  std::thread closer([&] {
    std::this_thread::sleep_for(100ms);
    channel->Close();
  });
  const auto start = Clock::now();
  EXPECT_FALSE(channel->ConsumeOne(10s, [](const Delivery&) { return kAck; }));
  EXPECT_LT(Clock::now() - start, 5s);
  closer.join();
  EXPECT_FALSE(channel->ConsumeDeadLetter(10s, [](const Delivery&) { return kAck; }));
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_FALSE(channel->Publish("x", PropertiesFor(1)).ok());
}

std::vector<BackendParam> Backends() {
  std::vector<BackendParam> out = {
      {"embedded", [] { return std::make_unique<EmbeddedBackend>(); }, false}};
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
  out.push_back({"rocketmq", [] { return NewRocketMqChannelBackend(); }, true});
  out.push_back({"rocketmq_acl", [] { return NewRocketMqAclChannelBackend(); }, true});
#endif
  return out;
}

std::vector<BackendParam> SharedQueueBackends() {
  std::vector<BackendParam> out;
  for (BackendParam& b : Backends()) {
    if (b.shares_queues) out.push_back(std::move(b));
  }
  return out;
}

std::string NameOf(const ::testing::TestParamInfo<BackendParam>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Backends, CommandChannelContract, ::testing::ValuesIn(Backends()), NameOf);
// Empty in a build without a broker-backed channel.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SharedQueueContract);
INSTANTIATE_TEST_SUITE_P(Backends, SharedQueueContract, ::testing::ValuesIn(SharedQueueBackends()),
                         NameOf);

}  // namespace
}  // namespace export_center::dispatch
