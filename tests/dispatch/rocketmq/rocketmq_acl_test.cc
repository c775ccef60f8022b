// The RocketMQ channel on a broker with ACL 2.0 on (authentication and
// authorization, tests/support RocketMqServer::StartWithAcl — one broker for
// the binary): with the right access key and secret `rocketmq init` works and
// commands go publish → consume → ack through the broker; with a wrong secret
// or none the broker refuses, the center says "authentication" at once (no
// timeout), and the outbox row stays PENDING until a center with the right
// credentials sends it.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include "dispatch/outbox_publisher.h"
#include "dispatch/rocketmq/rocketmq_command_channel.h"
#include "dispatch/rocketmq/rocketmq_names.h"
#include "dispatch/rocketmq/rocketmq_setup.h"
#include "rocketmq/remoting/remoting_client.h"
#include "store/sqlite/sqlite_task_store.h"
#include "tests/support/rocketmq_server.h"

namespace export_center::dispatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr char kUser[] = "center";
constexpr char kPassword[] = "center-secret-1234";

// One ACL broker for every suite of the binary, stopped after the last.
class AclBroker : public ::testing::Environment {
 public:
  void SetUp() override {
    auto started = testing::RocketMqServer::StartWithAcl(kUser, kPassword);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server = std::move(*started);
  }
  void TearDown() override { server.reset(); }
  static inline std::unique_ptr<testing::RocketMqServer> server;
};
[[maybe_unused]] ::testing::Environment* const kAclBroker =
    ::testing::AddGlobalTestEnvironment(new AclBroker);

class RocketMqAclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(AclBroker::server, nullptr) << "no broker";
    server_ = AclBroker::server.get();
  }

  // A prefix of its own per test; credentials as given ("" = unsigned).
  ChannelOptions Options(const std::string& prefix, const std::string& access_key,
                         const std::string& secret_key) {
    ChannelOptions o;
    o.kind = "rocketmq";
    o.rocketmq.namesrv_addr = server_->namesrv_addr();
    o.rocketmq.topic_prefix = "acl-" + prefix + std::to_string(getpid()) + "-";
    o.rocketmq.send_timeout_ms = 2000;
    o.rocketmq.access_key = access_key;
    o.rocketmq.secret_key = secret_key;
    return o;
  }

  testing::RocketMqServer* server_ = nullptr;
};

// Init refused: Unauthenticated, naming authentication, long before the 60 s
// it would wait for a broker.
void ExpectInitRefused(const ChannelOptions& options, const std::string& what) {
  const auto start = Clock::now();
  Status s = InitRocketMq(
      options, [](const std::string&) {}, 60s);
  EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << what << ": " << s.ToString();
  EXPECT_NE(s.message().find("authentication failed"), std::string::npos) << s.ToString();
  EXPECT_LT(Clock::now() - start, 10s) << what << ": refused at once, not timed out";
}

TEST_F(RocketMqAclTest, RightCredentialsInitAndCommandsFlowPublishConsumeAck) {
  ChannelOptions options = Options("ok-", kUser, kPassword);
  std::vector<std::string> lines;
  Status init = InitRocketMq(
      options, [&](const std::string& l) { lines.push_back(l); }, 60s);
  ASSERT_TRUE(init.ok()) << init.ToString();
  const RocketMqNames names = RocketMqNamesFor(*options.rocketmq.topic_prefix);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_NE(all.find(names.command_topic), std::string::npos) << all;
  EXPECT_NE(all.find(names.worker_group), std::string::npos) << all;

  auto publisher = std::move(NewRocketMqCommandChannel(options).value());
  auto worker = std::move(NewRocketMqCommandChannel(options).value());
  constexpr int kCommands = 10;
  for (int i = 0; i < kCommands; ++i) {
    Status sent = publisher->Publish("cmd-" + std::to_string(i), {{"taskId", std::to_string(i)}});
    ASSERT_TRUE(sent.ok()) << sent.ToString();
  }
  std::multiset<std::string> seen;
  const auto deadline = Clock::now() + 30s;
  while (seen.size() < kCommands && Clock::now() < deadline) {
    worker->ConsumeOne(200ms, [&](const Delivery& d) {
      EXPECT_EQ(d.properties.at("taskId"), d.payload.substr(4));
      seen.insert(d.payload);
      return DeliveryOutcome::kAck;
    });
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kCommands)) << "every command delivered";
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
  // Acknowledged (offsets committed with signed requests): a new worker of the
  // group gets nothing again.
  worker->Close();
  auto second = std::move(NewRocketMqCommandChannel(options).value());
  EXPECT_FALSE(second->ConsumeOne(4s, [](const Delivery& d) {
    ADD_FAILURE() << "redelivered after ack: " << d.payload;
    return DeliveryOutcome::kAck;
  }));
}

TEST_F(RocketMqAclTest, WrongSecretOrNoCredentialsInitIsRefusedNamingAuthentication) {
  ExpectInitRefused(Options("wrong-", kUser, "not-the-secret"), "wrong secret");
  ExpectInitRefused(Options("unknown-", "nobody", kPassword), "unknown user");
  ExpectInitRefused(Options("none-", "", ""), "no credentials");
}

// ---- authorization: a normal user with exactly the documented rights ----

// One policy entry of an ACL 2.0 ACL: a resource ("Topic:x", "Group:g") and
// its allowed actions ("Pub", "Sub", "Get").
struct Grant {
  std::string resource;
  std::vector<std::string> actions;
};

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// Creates `user` (a normal user) and its ACL on the broker with the super
// user's signed AUTH_CREATE_USER (3001) and AUTH_CREATE_ACL (3006) requests.
Status CreateNormalUser(const std::string& broker, const std::string& user,
                        const std::string& password, const std::vector<Grant>& grants) {
  rocketmq::remoting::RemotingClientOptions options;
  options.credentials = {kUser, kPassword};
  rocketmq::remoting::RemotingClient client(options);
  auto create_user = rocketmq::remoting::RemotingCommand::Request(3001);
  create_user.Set("username", user);
  create_user.body = "{\"username\":" + Quoted(user) + ",\"password\":" + Quoted(password) +
                     ",\"userType\":\"Normal\"}";
  auto r = client.Invoke(broker, create_user, 5s);
  if (!r.ok()) return r.status();
  if (r->code != 0) return Internal("create user: " + r->Describe());
  std::string entries;
  for (const Grant& g : grants) {
    std::string actions;
    for (const std::string& a : g.actions) actions += (actions.empty() ? "" : ",") + Quoted(a);
    entries += (entries.empty() ? "" : ",") + std::string("{\"resource\":") + Quoted(g.resource) +
               ",\"actions\":[" + actions + "],\"decision\":\"Allow\"}";
  }
  auto create_acl = rocketmq::remoting::RemotingCommand::Request(3006);
  create_acl.Set("subject", "User:" + user);
  create_acl.body = "{\"subject\":" + Quoted("User:" + user) +
                    ",\"policies\":[{\"policyType\":\"Custom\",\"entries\":[" + entries + "]}]}";
  r = client.Invoke(broker, create_acl, 5s);
  if (!r.ok()) return r.status();
  if (r->code != 0) return Internal("create acl: " + r->Describe());
  return Status::Ok();
}

// What docs/deploy.md#required-permissions lists for `serve`.
std::vector<Grant> ServeGrants(const RocketMqNames& n) {
  return {{"Topic:" + n.command_topic, {"Pub", "Sub", "Get"}},
          {"Group:" + n.worker_group, {"Sub", "Get"}},
          {"Topic:" + n.dead_letter_topic, {"Sub", "Get"}},
          {"Group:" + n.dlq_handler_group, {"Sub", "Get"}}};
}

TEST_F(RocketMqAclTest, NormalUserWithTheDocumentedRightsServesAndIsRefusedTheRest) {
  ChannelOptions admin = Options("authz-", kUser, kPassword);
  ASSERT_TRUE(InitRocketMq(
                  admin, [](const std::string&) {}, 60s)
                  .ok());
  const RocketMqNames names = RocketMqNamesFor(*admin.rocketmq.topic_prefix);
  const std::string user = "serve" + std::to_string(getpid());
  ASSERT_TRUE(
      CreateNormalUser(server_->broker_addr(), user, "serve-secret", ServeGrants(names)).ok());
  ChannelOptions serve = admin;
  serve.rocketmq.access_key = user;
  serve.rocketmq.secret_key = "serve-secret";

  // Not an administrator: init is refused as a missing right, not as bad credentials.
  Status init = InitRocketMq(
      serve, [](const std::string&) {}, 60s);
  EXPECT_EQ(init.code(), StatusCode::kPermissionDenied) << init.ToString();
  EXPECT_NE(init.message().find("lacks this permission"), std::string::npos) << init.ToString();

  // publish → consume → ack, and a rejected command through the retry topic
  // to the dead letters, read by the DLQ handler.
  serve.delivery_limit = 1;  // the first rejection dead-letters
  auto publisher = std::move(NewRocketMqCommandChannel(serve).value());
  auto worker = std::move(NewRocketMqCommandChannel(serve).value());
  ASSERT_TRUE(publisher->Publish("ack-me", {{"taskId", "1"}}).ok());
  ASSERT_TRUE(publisher->Publish("reject-me", {{"taskId", "2"}}).ok());
  std::set<std::string> seen;
  auto deadline = Clock::now() + 30s;
  while (seen.size() < 2 && Clock::now() < deadline) {
    worker->ConsumeOne(200ms, [&](const Delivery& d) {
      seen.insert(d.payload);
      return d.payload == "reject-me" ? DeliveryOutcome::kReject : DeliveryOutcome::kAck;
    });
  }
  EXPECT_EQ(seen, (std::set<std::string>{"ack-me", "reject-me"}));
  std::string dead;
  deadline = Clock::now() + 60s;
  while (dead.empty() && Clock::now() < deadline) {
    worker->ConsumeDeadLetter(200ms, [&](const Delivery& d) {
      dead = d.payload;
      return DeliveryOutcome::kAck;
    });
  }
  EXPECT_EQ(dead, "reject-me") << "the DLQ handler read the dead letter as the normal user";

  // Another prefix's topic: the user has no right there.
  ChannelOptions elsewhere = Options("authz-other-", kUser, kPassword);
  ASSERT_TRUE(InitRocketMq(
                  elsewhere, [](const std::string&) {}, 60s)
                  .ok());
  elsewhere.rocketmq.access_key = user;
  elsewhere.rocketmq.secret_key = "serve-secret";
  auto stranger = std::move(NewRocketMqCommandChannel(elsewhere).value());
  Status sent = stranger->Publish("x", {{"taskId", "3"}});
  EXPECT_EQ(sent.code(), StatusCode::kUnavailable) << sent.ToString();
  EXPECT_NE(sent.message().find("lacks this permission"), std::string::npos) << sent.ToString();
}

class OutboxOnAclBrokerTest : public RocketMqAclTest {
 protected:
  void SetUp() override {
    RocketMqAclTest::SetUp();
    dir_ = std::filesystem::temp_directory_path() / ("ec-rmq-acl-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store_ = std::move(store::OpenSqliteTaskStore((dir_ / "db.sqlite").string()).value());
    ASSERT_TRUE(store_->Migrate().ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int64_t CreateTask() {
    store::NewTask t;
    t.tenant_id = "t1";
    t.requested_by = "u1";
    t.export_type = "TEST_LIST";
    t.task_name = "acl";
    t.format = task::FileFormat::kCsv;
    t.parameters_json = "{}";
    t.params_hash = "acl";
    auto created = store_->CreateTask(t, store::CreateLimits{60, 1000, 1000});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->task.id : 0;
  }

  store::OutboxEntry OnlyOutboxRow(int64_t task_id) {
    auto rows = store_->ListOutboxForTask(task_id);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(rows.ok() ? rows->size() : 0, 1u);
    return rows.ok() && !rows->empty() ? rows->front() : store::OutboxEntry{};
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::TaskStore> store_;
};

TEST_F(OutboxOnAclBrokerTest, RefusedSendKeepsTheRowPendingUntilTheRightCredentialsSendIt) {
  ChannelOptions good = Options("outbox-", kUser, kPassword);
  ASSERT_TRUE(InitRocketMq(
                  good, [](const std::string&) {}, 60s)
                  .ok());
  const int64_t task_id = CreateTask();
  ASSERT_GT(task_id, 0);
  PublisherOptions publishing;
  publishing.backoff_seconds = {1};

  for (const auto& [access_key, secret_key] :
       std::vector<std::pair<std::string, std::string>>{{kUser, "not-the-secret"}, {"", ""}}) {
    ChannelOptions bad = good;
    bad.rocketmq.access_key = access_key;
    bad.rocketmq.secret_key = secret_key;
    auto channel = std::move(NewRocketMqCommandChannel(bad).value());
    // The channel's own answer: retryable, and it says why.
    const auto start = Clock::now();
    Status sent = channel->Publish("direct", {{"taskId", "0"}});
    EXPECT_EQ(sent.code(), StatusCode::kUnavailable) << sent.ToString();
    EXPECT_NE(sent.message().find("authentication failed"), std::string::npos) << sent.ToString();
    EXPECT_LT(Clock::now() - start, 2s) << "refused at once, not after the send timeout";

    std::this_thread::sleep_for(1100ms);  // the row's back-off from the last round
    OutboxPublisher publisher(store_.get(), channel.get(), publishing, "bad-publisher");
    EXPECT_EQ(publisher.PublishDueOnce(), 1);
    store::OutboxEntry row = OnlyOutboxRow(task_id);
    EXPECT_EQ(row.status, store::OutboxStatus::kPending) << "nothing lost: the row waits";
    ASSERT_TRUE(row.last_error.has_value());
    EXPECT_NE(row.last_error->find("authentication failed"), std::string::npos) << *row.last_error;
  }
  EXPECT_EQ(OnlyOutboxRow(task_id).attempt_count, 2);

  // Fixed credentials: the same row goes out and arrives.
  auto channel = std::move(NewRocketMqCommandChannel(good).value());
  std::this_thread::sleep_for(1100ms);
  OutboxPublisher publisher(store_.get(), channel.get(), publishing, "good-publisher");
  EXPECT_EQ(publisher.PublishDueOnce(), 1);
  EXPECT_EQ(OnlyOutboxRow(task_id).status, store::OutboxStatus::kSent);
  bool arrived = false;
  const auto deadline = Clock::now() + 30s;
  while (!arrived && Clock::now() < deadline) {
    channel->ConsumeOne(200ms, [&](const Delivery& d) {
      if (d.properties.count("taskId") && d.properties.at("taskId") == std::to_string(task_id)) {
        arrived = true;
      }
      return DeliveryOutcome::kAck;
    });
  }
  EXPECT_TRUE(arrived) << "the outbox row's command reached the worker group";
}

}  // namespace
}  // namespace export_center::dispatch
