// The `subscriptions:` section through the public ParseConfig: the defaults,
// what an operator writes, and a value out of range named by its key path
// (docs/configuration.md#subscriptions).

#include <gtest/gtest.h>

#include <string>

#include "config/config.h"

namespace export_center::config {
namespace {

const char kBase[] = R"(
auth:
  jwt-hs256-secret: test-secret-0123456789abcdef0123456789
  download-url-secret: test-download-0123456789abcdef0123456789
  jwt-issuer: test-issuer
  jwt-audience: export-center
)";

StatusOr<AppConfig> Parse(const std::string& section) {
  return ParseConfig(std::string(kBase) + section, "test.yaml");
}

TEST(SubscriptionsYamlTest, OnByDefaultWithTheDocumentedDefaults) {
  StatusOr<AppConfig> c = Parse("");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->subscriptions.enabled);
  EXPECT_EQ(c->subscriptions.min_interval_minutes, 60);
  EXPECT_EQ(c->subscriptions.catch_up_window_seconds, 3600);
  EXPECT_EQ(c->subscriptions.max_per_owner, 20);
  EXPECT_EQ(c->subscriptions.max_per_tenant, 1000);
  EXPECT_EQ(c->subscriptions.history_days, 30);
  EXPECT_EQ(c->subscriptions.max_consecutive_failures, 3);
  EXPECT_EQ(c->subscriptions.poll_interval_ms, 15000);
}

TEST(SubscriptionsYamlTest, ReadsTheSection) {
  StatusOr<AppConfig> c = Parse(R"(
subscriptions:
  enabled: false
  min-interval-minutes: 15
  catch-up-window-seconds: 600
  max-per-owner: 5
  max-per-tenant: 50
  history-days: 7
  max-consecutive-failures: 2
  poll-interval-ms: 1000
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->subscriptions.enabled);
  EXPECT_EQ(c->subscriptions.min_interval_minutes, 15);
  EXPECT_EQ(c->subscriptions.catch_up_window_seconds, 600);
  EXPECT_EQ(c->subscriptions.max_per_owner, 5);
  EXPECT_EQ(c->subscriptions.max_per_tenant, 50);
  EXPECT_EQ(c->subscriptions.history_days, 7);
  EXPECT_EQ(c->subscriptions.max_consecutive_failures, 2);
  EXPECT_EQ(c->subscriptions.poll_interval_ms, 1000);
}

TEST(SubscriptionsYamlTest, AValueOutOfRangeOrAnUnknownKeyIsNamed) {
  StatusOr<AppConfig> c = Parse("subscriptions:\n  min-interval-minutes: 0\n  colour: red\n");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("subscriptions.min-interval-minutes"), std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("subscriptions.colour"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace export_center::config
