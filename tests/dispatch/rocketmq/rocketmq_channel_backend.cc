// The RocketMQ backend of the CommandChannel contract suite: one real
// NameServer + broker for the whole test binary (tests/support), fresh topics
// and groups per test — a new topic prefix, set up by InitRocketMq exactly as
// `export-center rocketmq init` does. A second backend runs the same on a
// broker with ACL 2.0 on, every request signed.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "../command_channel_contract.h"  // the suite's view of a backend
#include "dispatch/rocketmq/rocketmq_command_channel.h"
#include "dispatch/rocketmq/rocketmq_setup.h"
#include "tests/support/rocketmq_server.h"

namespace export_center::dispatch {
namespace {

using namespace std::chrono_literals;

// The user and password of the ACL broker's super user.
constexpr char kAclUser[] = "contract";
constexpr char kAclPassword[] = "contract-secret";

class RocketMqBackend final : public ChannelBackend {
 public:
  // `acl`: the broker runs with authentication and authorization on and the
  // channel signs every request.
  explicit RocketMqBackend(bool acl) : acl_(acl) {
    auto started = acl ? testing::RocketMqServer::StartWithAcl(kAclUser, kAclPassword)
                       : testing::RocketMqServer::Start();
    if (!started.ok()) {
      // A real-server test that cannot start its server fails: never a skip.
      std::fprintf(stderr, "cannot start the test broker: %s\n",
                   started.status().ToString().c_str());
      std::abort();
    }
    server_ = std::move(*started);
  }

  void Reset(int delivery_limit) override {
    static std::atomic<int> round{0};
    options_ = ChannelOptions{};
    options_.kind = "rocketmq";
    options_.delivery_limit = delivery_limit;
    options_.rocketmq.namesrv_addr = server_->namesrv_addr();
    options_.rocketmq.topic_prefix =
        "contract-" + std::to_string(getpid()) + "-" + std::to_string(++round) + "-";
    if (acl_) {
      options_.rocketmq.access_key = kAclUser;
      options_.rocketmq.secret_key = kAclPassword;
    }
    Status s = InitRocketMq(
        options_, [](const std::string&) {}, 60s);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<CommandChannel> Open() override {
    auto channel = NewRocketMqCommandChannel(options_);
    EXPECT_TRUE(channel.ok()) << channel.status().ToString();
    return channel.ok() ? std::move(*channel) : nullptr;
  }

  bool SharesQueues() const override { return true; }
  // A rejected message comes back after the broker's 1 s retry delay, plus a
  // rebalance or a pull round; a dead letter after its topic's first pull.
  std::chrono::milliseconds RedeliveryBound() const override { return 30s; }
  // Longer than the retry delay: a wrong redelivery would show within it.
  std::chrono::milliseconds QuietWindow() const override { return 3s; }

 private:
  const bool acl_;
  std::unique_ptr<testing::RocketMqServer> server_;
  ChannelOptions options_;
};

}  // namespace

std::unique_ptr<ChannelBackend> NewRocketMqChannelBackend() {
  return std::make_unique<RocketMqBackend>(false);
}

std::unique_ptr<ChannelBackend> NewRocketMqAclChannelBackend() {
  return std::make_unique<RocketMqBackend>(true);
}

}  // namespace export_center::dispatch
