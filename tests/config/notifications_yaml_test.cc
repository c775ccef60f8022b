// The `notifications:` section through the public ParseConfig: what an
// operator writes, and the errors a wrong file gets (docs/notifications.md).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "config/config.h"
#include "section_yaml_test.h"  // beside this file

namespace export_center::config {
namespace {

using section_test::ExpectProblem;
using section_test::Parse;

class NotificationsYamlTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("EXPORT_CENTER_WEBHOOK_SECRET_OPS_HOOK"); }
};

TEST_F(NotificationsYamlTest, DefaultsHaveNoReceivers) {
  StatusOr<AppConfig> c = Parse("");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->notifications.enabled);
  EXPECT_TRUE(c->notifications.receivers.empty());
  EXPECT_EQ(c->notifications.max_attempts, 10);
  EXPECT_EQ(c->notifications.backoff_seconds, (std::vector<int>{5, 15, 60, 300, 900}));
}

TEST_F(NotificationsYamlTest, ReadsReceiversAndTheirFilters) {
  StatusOr<AppConfig> c = Parse(R"(
notifications:
  allowed-targets: ["hooks.example.com:443", "127.0.0.1:9100"]
  max-attempts: 4
  receivers:
    ops-hook:
      url: https://Hooks.Example.com/export-center?team=ops
      secret: file-secret-0123456789
      export-types: [ORDERS]
      users: [alice]
      events: [SUCCEEDED, FAILED]
    local:
      url: http://127.0.0.1:9100/hook
      secret: other-secret-0123456789
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->notifications.receivers.size(), 2u);
  const notify::WebhookReceiver& ops = c->notifications.receivers[0];
  EXPECT_EQ(ops.id, "ops-hook");
  EXPECT_EQ(ops.url, "https://Hooks.Example.com/export-center?team=ops");
  EXPECT_EQ(ops.secret, "file-secret-0123456789");
  EXPECT_EQ(ops.export_types, (std::vector<std::string>{"ORDERS"}));
  EXPECT_EQ(ops.users, (std::vector<std::string>{"alice"}));
  EXPECT_EQ(ops.events, (std::vector<std::string>{"SUCCEEDED", "FAILED"}));
  EXPECT_EQ(c->notifications.max_attempts, 4);
}

TEST_F(NotificationsYamlTest, TheSecretFromTheEnvironmentWins) {
  setenv("EXPORT_CENTER_WEBHOOK_SECRET_OPS_HOOK", "env-secret-0123456789abcdef", 1);
  StatusOr<AppConfig> c = Parse(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: https://hooks.example.com/x
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->notifications.receivers[0].secret, "env-secret-0123456789abcdef");
  EXPECT_NE(std::find(c->env_overrides.begin(), c->env_overrides.end(),
                      "EXPORT_CENTER_WEBHOOK_SECRET_OPS_HOOK"),
            c->env_overrides.end());
}

// The anti-SSRF rule: a URL whose host:port is not listed is refused at load,
// naming the key path, loopback included.
TEST_F(NotificationsYamlTest, AUrlOutsideTheAllowListIsRefusedAtLoad) {
  const std::string secret = "      secret: file-secret-0123456789\n";
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: http://127.0.0.1:8080/admin
)" + secret,
                "notifications.receivers.ops-hook.url: target \"127.0.0.1:8080\" is not in "
                "notifications.allowed-targets");
  // Same host, another port.
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: http://hooks.example.com/x
)" + secret,
                "notifications.receivers.ops-hook.url: target \"hooks.example.com:80\" is not in");
  // No allow-list at all refuses every receiver.
  ExpectProblem(R"(
notifications:
  receivers:
    ops-hook:
      url: https://hooks.example.com/x
)" + secret,
                "notifications.receivers.ops-hook.url: target \"hooks.example.com:443\"");
  // User info could smuggle another target past a reader of the file.
  ExpectProblem(
      R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: https://hooks.example.com@169.254.169.254/x
)" + secret,
      "notifications.receivers.ops-hook.url: \"https://hooks.example.com@169.254.169.254/x\" "
      "must not contain user info");
}

TEST_F(NotificationsYamlTest, BadReceiversGetOneLineEach) {
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: https://hooks.example.com/x
)",
                "notifications.receivers.ops-hook.secret: is required (or set "
                "EXPORT_CENTER_WEBHOOK_SECRET_OPS_HOOK)");
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: https://hooks.example.com/x
      secret: short
)",
                "notifications.receivers.ops-hook.secret: is too short (5 bytes)");
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: https://hooks.example.com/x
      secret: "${OPS_HOOK_SECRET}"
)",
                "notifications.receivers.ops-hook.secret: is the unresolved placeholder "
                "${OPS_HOOK_SECRET}");
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: https://hooks.example.com/x
      secret: file-secret-0123456789
      export-types: [ORDRES]
      events: [RUNNING]
)",
                "notifications.receivers.ops-hook.export-types: names \"ORDRES\", which is not "
                "defined");
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: ftp://hooks.example.com/x
      secret: file-secret-0123456789
)",
                "notifications.receivers.ops-hook.url: \"ftp://hooks.example.com/x\" is not a "
                "webhook URL");
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com"]
)",
                "notifications.allowed-targets: \"hooks.example.com\" is not host:port");
  ExpectProblem(R"(
notifications:
  receivers:
    Ops_Hook:
      url: https://hooks.example.com/x
)",
                "notifications.receivers.Ops_Hook: invalid receiver id");
  ExpectProblem(R"(
notifications:
  recievers: {}
)",
                "notifications.recievers: ");
}

TEST_F(NotificationsYamlTest, AnEventThatIsNoEndStateIsRefused) {
  ExpectProblem(R"(
notifications:
  allowed-targets: ["hooks.example.com:443"]
  receivers:
    ops-hook:
      url: https://hooks.example.com/x
      secret: file-secret-0123456789
      events: [RUNNING]
)",
                "notifications.receivers.ops-hook.events: \"RUNNING\" is not an end state");
}

TEST_F(NotificationsYamlTest, TheLeaseMustOutlastADelivery) {
  ExpectProblem(R"(
notifications:
  lease-seconds: 5
  timeout-ms: 5000
)",
                "notifications.lease-seconds: 5 s is too short");
}

}  // namespace
}  // namespace export_center::config
