// The `mail:` section through the public ParseConfig: what an operator
// writes, and the errors a wrong file gets, each naming its key path
// (docs/configuration.md#mail).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "config/config.h"
#include "section_yaml_test.h"  // beside this file

namespace export_center::config {
namespace {

using section_test::ExpectProblem;
using section_test::Parse;

class MailYamlTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("EXPORT_CENTER_MAIL_PASSWORD"); }
};

TEST_F(MailYamlTest, OffByDefault) {
  StatusOr<AppConfig> c = Parse("");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->mail.enabled);
  EXPECT_EQ(c->mail.tls, notify::mail::MailTls::kStartTls);
  EXPECT_EQ(c->mail.port, 587);
  EXPECT_EQ(c->mail.max_attempts, 8);
}

TEST_F(MailYamlTest, ReadsTheSectionAndThePasswordFromTheEnvironment) {
  setenv("EXPORT_CENTER_MAIL_PASSWORD", "from-the-environment", 1);
  StatusOr<AppConfig> c = Parse(R"(
mail:
  enabled: true
  host: smtp.example.com
  port: 465
  tls: implicit
  username: export-center
  password: from-the-file
  from: exports@example.com
  allowed-domains: [example.com, Example.CN]
  attachment-max-bytes: 1048576
  backoff-seconds: [10, 20]
  max-attempts: 3
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->mail.enabled);
  EXPECT_EQ(c->mail.host, "smtp.example.com");
  EXPECT_EQ(c->mail.port, 465);
  EXPECT_EQ(c->mail.tls, notify::mail::MailTls::kImplicit);
  EXPECT_EQ(c->mail.password, "from-the-environment");
  EXPECT_EQ(c->mail.allowed_domains, (std::vector<std::string>{"example.com", "Example.CN"}));
  EXPECT_EQ(c->mail.attachment_max_bytes, 1048576);
  EXPECT_EQ(c->mail.backoff_seconds, (std::vector<int>{10, 20}));
  EXPECT_EQ(c->mail.max_attempts, 3);
}

TEST_F(MailYamlTest, EachMistakeNamesItsKey) {
  ExpectProblem("mail:\n  enabled: true\n", "mail.host: is required when mail.enabled is true");
  ExpectProblem("mail:\n  enabled: true\n  host: smtp.example.com\n  from: a@example.com\n",
                "mail.allowed-domains: is required when mail.enabled is true");
  ExpectProblem("mail:\n  host: smtp.example.com\n  tls: none\n",
                "mail.tls: none is allowed only for a loopback host, not \"smtp.example.com\"");
  ExpectProblem("mail:\n  tls: sometimes\n", "mail.tls:");
  ExpectProblem("mail:\n  username: u\n", "mail.password: is required with mail.username");
  ExpectProblem("mail:\n  from: not-an-address\n",
                "mail.from: \"not-an-address\" is not an address");
  ExpectProblem("mail:\n  allowed-domains: [\"*.example.com\"]\n",
                "mail.allowed-domains: \"*.example.com\" is not a domain name");
  ExpectProblem("mail:\n  ca-file: /nonexistent/ca.pem\n",
                "mail.ca-file: \"/nonexistent/ca.pem\" cannot be read");
  ExpectProblem("mail:\n  timeout-ms: 60000\n  lease-seconds: 30\n",
                "mail.lease-seconds: 30 s is too short for mail.timeout-ms");
  ExpectProblem("mail:\n  port: 70000\n", "mail.port:");
  // Loopback without TLS is fine: a relay on the same machine.
  EXPECT_TRUE(Parse("mail:\n  host: 127.0.0.1\n  port: 2525\n  tls: none\n").ok());
}

TEST_F(MailYamlTest, TheSubscriptionsDeliveryBlockHasDefaultsAndRanges) {
  StatusOr<AppConfig> c = Parse("");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->subscription_delivery.failure_grace_period_ms, 24 * 3600 * 1000LL);
  EXPECT_EQ(c->subscription_delivery.link_ttl_ms, 72 * 3600 * 1000LL);
  EXPECT_TRUE(c->subscription_delivery.attachments);
  c = Parse(
      "subscriptions:\n  failure-grace-period-minutes: 90\n  link-ttl-minutes: 60\n"
      "  attach: false\n  delivery-poll-interval-ms: 500\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->subscription_delivery.failure_grace_period_ms, 90 * 60 * 1000LL);
  EXPECT_EQ(c->subscription_delivery.link_ttl_ms, 60 * 60 * 1000LL);
  EXPECT_FALSE(c->subscription_delivery.attachments);
  EXPECT_EQ(c->subscription_delivery.poll_interval_ms, 500);
  ExpectProblem("subscriptions:\n  link-ttl-minutes: 1\n", "subscriptions.link-ttl-minutes:");
  ExpectProblem("subscriptions:\n  failure-grace-period-minutes: 0\n",
                "subscriptions.failure-grace-period-minutes:");
}

}  // namespace
}  // namespace export_center::config
