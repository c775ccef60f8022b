// What the RocketMQ channel does beyond the CommandChannel contract, on a real
// NameServer + broker (tests/support): what `rocketmq init` leaves on the
// broker, that it waits for a broker on a first deploy, and that a send while
// the broker is down is Unavailable (the outbox row stays PENDING) and works
// again once it is back; and that the outbox age keeps growing while it is down.

#include "dispatch/rocketmq/rocketmq_command_channel.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "dispatch/outbox_publisher.h"
#include "dispatch/rocketmq/rocketmq_names.h"
#include "dispatch/rocketmq/rocketmq_setup.h"
#include "rocketmq/admin.h"
#include "store/sqlite/sqlite_task_store.h"
#include "tests/support/rocketmq_server.h"

namespace export_center::dispatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class RocketMqChannelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = testing::RocketMqServer::Start();
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(*started);
  }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override { ASSERT_NE(server_, nullptr) << "no broker"; }

  ChannelOptions Options(const std::string& prefix) {
    ChannelOptions o;
    o.kind = "rocketmq";
    o.rocketmq.namesrv_addr = server_->namesrv_addr();
    o.rocketmq.topic_prefix = prefix + std::to_string(getpid()) + "-";
    o.rocketmq.send_timeout_ms = 1000;
    return o;
  }

  std::unique_ptr<rocketmq::Admin> Admin() {
    rocketmq::ClientOptions c;
    c.namesrv_addrs = {server_->namesrv_addr()};
    return std::move(rocketmq::Admin::Start(c).value());
  }

  static std::unique_ptr<testing::RocketMqServer> server_;
};

std::unique_ptr<testing::RocketMqServer> RocketMqChannelTest::server_;

TEST_F(RocketMqChannelTest, InitCreatesTopicsWithReadWritePermissionAndIsIdempotent) {
  ChannelOptions options = Options("init-");
  std::vector<std::string> lines;
  for (int round = 0; round < 2; ++round) {
    lines.clear();
    Status s = InitRocketMq(
        options, [&](const std::string& l) { lines.push_back(l); }, 30s);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.ToString();
  }
  const RocketMqNames names = RocketMqNamesFor(*options.rocketmq.topic_prefix);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_NE(all.find(names.worker_group + " on broker broker-a"), std::string::npos) << all;
  EXPECT_NE(all.find("retry max times 2\n"), std::string::npos) << all;
  EXPECT_NE(all.find(names.dlq_handler_group), std::string::npos) << all;

  auto admin = Admin();
  auto command = admin->GetTopicRoute(names.command_topic);
  ASSERT_TRUE(command.ok()) << command.status().ToString();
  ASSERT_EQ(command->queues.size(), 1u);
  EXPECT_EQ(command->queues[0].read_queues, 4);
  EXPECT_EQ(command->queues[0].write_queues, 4);
  EXPECT_EQ(command->queues[0].perm, 6);
  auto dlq = admin->GetTopicRoute(names.dead_letter_topic);
  ASSERT_TRUE(dlq.ok()) << dlq.status().ToString();
  ASSERT_EQ(dlq->queues.size(), 1u);
  EXPECT_EQ(dlq->queues[0].perm, 6) << "a DLQ a 4.x broker made itself would be write-only (2)";
}

// `export-center check`: before init every missing topic and group is named
// with the command that creates them; after init the check passes; the
// subscription-group listing it relies on sees init's groups.
TEST_F(RocketMqChannelTest, CheckNamesWhatInitWouldCreateAndPassesAfterInit) {
  ChannelOptions options = Options("check-");
  const RocketMqNames names = RocketMqNamesFor(*options.rocketmq.topic_prefix);
  auto before = CheckRocketMq(options);
  ASSERT_EQ(before.status().code(), StatusCode::kNotFound) << before.status().ToString();
  const std::string& missing = before.status().message();
  for (const std::string& name :
       {"topic " + names.command_topic, "topic " + names.dead_letter_topic,
        "group " + names.worker_group + " on broker broker-a",
        "group " + names.dlq_handler_group + " on broker broker-a"}) {
    EXPECT_NE(missing.find(name), std::string::npos) << name << " not in: " << missing;
  }
  EXPECT_NE(missing.find("run `export-center rocketmq init`"), std::string::npos) << missing;

  ASSERT_TRUE(InitRocketMq(
                  options, [](const std::string&) {}, 30s)
                  .ok());
  auto after = CheckRocketMq(options);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_NE(after->find("1 master broker(s)"), std::string::npos) << *after;

  auto admin = Admin();
  auto brokers = admin->ListBrokers();
  ASSERT_TRUE(brokers.ok() && !brokers->empty());
  auto groups = admin->ListSubscriptionGroups(brokers->front().addr);
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  EXPECT_TRUE(std::is_sorted(groups->begin(), groups->end()));
  EXPECT_NE(std::find(groups->begin(), groups->end(), names.worker_group), groups->end());

  ChannelOptions nobody = options;
  nobody.rocketmq.namesrv_addr = "127.0.0.1:1";  // nothing listens on port 1
  EXPECT_EQ(CheckRocketMq(nobody).status().code(), StatusCode::kUnavailable);
}

TEST_F(RocketMqChannelTest, ChannelOnTopicsThatDoNotExistIsUnavailableNotLost) {
  ChannelOptions options = Options("no-init-");  // `rocketmq init` never ran
  auto channel = NewRocketMqCommandChannel(options);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  Status s = (*channel)->Publish("{}", {{"taskId", "1"}});
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("rocketmq init"), std::string::npos) << s.ToString();
}

TEST_F(RocketMqChannelTest, BadOptionsFailAtOpen) {
  ChannelOptions options = Options("bad-");
  options.rocketmq.topic_prefix.reset();
  EXPECT_EQ(NewRocketMqCommandChannel(options).status().code(), StatusCode::kInvalidArgument);
  options = Options("bad-");
  options.rocketmq.namesrv_addr = "";
  EXPECT_EQ(NewRocketMqCommandChannel(options).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RocketMqChannelTest, PublishOnlyChannelHoldsNoQueues) {
  // A process with consumer.enabled: false only publishes. Were it a member
  // of the worker group, it would own half the queues and their commands
  // would wait for ever.
  ChannelOptions options = Options("publish-only-");
  ASSERT_TRUE(InitRocketMq(
                  options, [](const std::string&) {}, 30s)
                  .ok());
  auto publisher = std::move(NewRocketMqCommandChannel(options).value());
  auto worker = std::move(NewRocketMqCommandChannel(options).value());
  EXPECT_FALSE(worker->ConsumeOne(2s, [](const Delivery&) { return DeliveryOutcome::kAck; }));
  constexpr int kCommands = 20;
  for (int i = 0; i < kCommands; ++i) {
    ASSERT_TRUE(publisher->Publish("p" + std::to_string(i), {{"taskId", std::to_string(i)}}).ok());
  }
  std::set<std::string> seen;
  const auto deadline = Clock::now() + 20s;
  while (seen.size() < kCommands && Clock::now() < deadline) {
    worker->ConsumeOne(200ms, [&](const Delivery& d) {
      seen.insert(d.payload);
      return DeliveryOutcome::kAck;
    });
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kCommands)) << "the worker got every queue";
}

// A stored command whose record does not decode (its magic code overwritten
// in the broker's commit log) is skipped by the worker's consumer and counted
// once through ChannelOptions (the center's export_rocketmq_undecodable_skipped_total);
// the commands around it are delivered.
TEST_F(RocketMqChannelTest, AnUndecodableStoredCommandIsSkippedAndCountedOnce) {
  ChannelOptions options = Options("undecodable-");
  ASSERT_TRUE(InitRocketMq(
                  options, [](const std::string&) {}, 30s)
                  .ok());
  std::atomic<int> skipped{0};
  options.rocketmq.undecodable_max_pulls = 2;
  options.rocketmq.on_undecodable_skipped = [&] { skipped++; };
  auto publisher = std::move(NewRocketMqCommandChannel(options).value());
  const std::string bad = "undecodable-command-" + std::to_string(getpid());
  for (const std::string& payload : {std::string("before"), bad, std::string("after")}) {
    ASSERT_TRUE(publisher->Publish(payload, {{"taskId", "7"}}).ok());
  }
  // The worker has not joined yet (it starts at the queues' first offsets);
  // the broker indexes each record within milliseconds, reading it again.
  std::this_thread::sleep_for(1s);
  auto offset = server_->CommitLogOffsetOfBody(bad);
  ASSERT_TRUE(offset.ok()) << offset.status().ToString();
  auto corruption = server_->CorruptRecord(*offset, /*at=*/4);
  ASSERT_TRUE(corruption.ok()) << corruption.status().ToString();

  auto worker = std::move(NewRocketMqCommandChannel(options).value());
  std::set<std::string> seen;
  const auto deadline = Clock::now() + 30s;
  while ((seen.size() < 2 || skipped.load() < 1) && Clock::now() < deadline) {
    worker->ConsumeOne(200ms, [&](const Delivery& d) {
      seen.insert(d.payload);
      return DeliveryOutcome::kAck;
    });
  }
  EXPECT_EQ(seen, (std::set<std::string>{"before", "after"}));
  EXPECT_FALSE(worker->ConsumeOne(1500ms, [](const Delivery&) { return DeliveryOutcome::kAck; }));
  EXPECT_EQ(skipped.load(), 1) << "skipped and counted once";
}

// Last: it takes the broker down and up.
TEST_F(RocketMqChannelTest, BrokerDownSendIsUnavailableAndInitWaitsForTheBroker) {
  ChannelOptions options = Options("outage-");
  ASSERT_TRUE(InitRocketMq(
                  options, [](const std::string&) {}, 30s)
                  .ok());
  auto channel = std::move(NewRocketMqCommandChannel(options).value());
  ASSERT_TRUE(channel->Publish("before", {{"taskId", "1"}}).ok());

  ASSERT_TRUE(server_->Kill().ok());
  const auto start = Clock::now();
  Status down = channel->Publish("during", {{"taskId", "2"}});
  EXPECT_EQ(down.code(), StatusCode::kUnavailable) << down.ToString();
  EXPECT_LT(Clock::now() - start, 5s) << "a send must end within its timeout";

  // A first deploy: init runs before the broker registered, and waits.
  std::atomic<bool> init_done{false};
  Status init_status;
  ChannelOptions fresh = Options("first-deploy-");
  std::thread init([&] {
    init_status = InitRocketMq(
        fresh, [](const std::string&) {}, 90s);
    init_done = true;
  });
  std::this_thread::sleep_for(3s);
  EXPECT_FALSE(init_done.load()) << "init must wait for a broker";
  ASSERT_TRUE(server_->Restart().ok());
  init.join();
  EXPECT_TRUE(init_status.ok()) << init_status.ToString();

  // The same channel sends again once the broker is back (routes refresh).
  Status up;
  const auto deadline = Clock::now() + 60s;
  do {
    up = channel->Publish("after", {{"taskId", "3"}});
    if (!up.ok()) std::this_thread::sleep_for(500ms);
  } while (!up.ok() && Clock::now() < deadline);
  EXPECT_TRUE(up.ok()) << up.ToString();
  std::vector<std::string> seen;
  const auto until = Clock::now() + 30s;
  while (seen.size() < 2 && Clock::now() < until) {
    channel->ConsumeOne(200ms, [&](const Delivery& d) {
      seen.push_back(d.payload);
      return DeliveryOutcome::kAck;
    });
  }
  std::sort(seen.begin(), seen.end());  // different queues: no order between them
  EXPECT_EQ(seen, (std::vector<std::string>{"after", "before"}));
}

// docs/observability.md#alerts: with the broker stopped, the outbox age keeps growing
// past every back-off step, so ExportOutboxOldestAge
// (deploy/prometheus/export-center.rules.yml: > 120 s for 2 min) fires in an
// outage. On a short time scale: back-off 1 s, and the age must pass 7 s
// (measured from next_retry_at, which each failed send moves on, it stayed
// below one back-off plus one send).
TEST_F(RocketMqChannelTest, OutboxAgeKeepsGrowingWhileTheBrokerIsDown) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ec-outbox-age-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto opened = store::OpenSqliteTaskStore((dir / "db.sqlite").string());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<store::TaskStore> store = std::move(*opened);
  ASSERT_TRUE(store->Migrate().ok());
  ChannelOptions options = Options("age-");
  ASSERT_TRUE(InitRocketMq(
                  options, [](const std::string&) {}, 30s)
                  .ok());
  auto channel = std::move(NewRocketMqCommandChannel(options).value());
  ASSERT_TRUE(server_->Kill().ok());

  store::NewTask t;
  t.tenant_id = "t1";
  t.requested_by = "alice";
  t.export_type = "ORDER_LIST";
  t.task_name = "during the outage";
  t.parameters_json = "{}";
  t.params_hash = "h";
  t.trace_id = "trace";
  ASSERT_TRUE(store->CreateTask(t, {60, 10, 10}).ok());
  PublisherOptions publisher_options;
  publisher_options.poll_interval_ms = 200;
  publisher_options.backoff_seconds = {1};
  OutboxPublisher publisher(store.get(), channel.get(), publisher_options, "age-test");
  publisher.Start();
  int64_t last_age = -1;
  const auto start = Clock::now();
  while (Clock::now() - start < 8500ms) {
    std::this_thread::sleep_for(500ms);
    auto g = store->ReadGauges();
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_GE(g->outbox_oldest_age_seconds, last_age) << "the age went back";
    last_age = g->outbox_oldest_age_seconds;
  }
  publisher.Stop();
  auto g = store->ReadGauges();
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->outbox_pending, 1);
  EXPECT_GE(g->outbox_max_attempt, 3) << "the sends must have failed again and again";
  EXPECT_GE(g->outbox_oldest_age_seconds, 7);
  store.reset();
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(server_->Restart().ok());  // for the tests after this one
}

}  // namespace
}  // namespace export_center::dispatch
