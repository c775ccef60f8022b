// Every setting from the environment (docs/configuration.md#environment): the
// rule's names, the older aliases, where each value came from, and unknown
// variables refused. The variables are handed in, so the process's own
// environment plays no part.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config/config.h"
#include "config/config_internal.h"
#include "config/yaml_reader.h"

namespace export_center::config {
namespace {

const char kFile[] = R"(
auth:
  jwt-hs256-secret: file-secret-0123456789abcdef0123456789
  download-url-secret: file-download-0123456789abcdef0123456789
  jwt-issuer: test-issuer
  jwt-audience: export-center
server:
  port: 9090
consumer:
  concurrency: 2
  retry-backoff-seconds: [60, 900]
datasources:
  orders-replica: {kind: sqlite, sqlite-path: replica.db}
provider-services:
  customer-service: {base-url: "http://127.0.0.1:9001", internal-token: token-0123456789abcdef}
)";

using Vars = std::map<std::string, std::string>;

StatusOr<AppConfig> Parse(const Vars& vars, const std::string& yaml = kFile) {
  StatusOr<YAML::Node> root = ParseYaml(yaml, "test.yaml");
  if (!root.ok()) return root.status();
  return ParseConfigNode(*root, "test.yaml", vars);
}

const SettingSource* SourceOf(const AppConfig& c, const std::string& key) {
  for (const SettingSource& s : c.settings) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

void ExpectProblem(const Vars& vars, const std::string& line) {
  StatusOr<AppConfig> c = Parse(vars);
  ASSERT_FALSE(c.ok()) << "expected: " << line;
  EXPECT_NE(c.status().message().find("\n" + line), std::string::npos)
      << "expected line: " << line << "\ngot:\n"
      << c.status().message();
}

TEST(ConfigEnvTest, TheRuleNamesEveryKey) {
  EXPECT_EQ(EnvOverlay::NameOf("consumer.concurrency"), "EXPORT_CENTER_CONSUMER__CONCURRENCY");
  EXPECT_EQ(EnvOverlay::NameOf("channel.rocketmq.topic-prefix"),
            "EXPORT_CENTER_CHANNEL__ROCKETMQ__TOPIC_PREFIX");
  EXPECT_EQ(EnvOverlay::NameOf("datasources.orders-replica.url"),
            "EXPORT_CENTER_DATASOURCES__ORDERS_REPLICA__URL");
  EXPECT_EQ(EnvOverlay::NameOf("instance-id"), "EXPORT_CENTER_INSTANCE_ID");
}

TEST(ConfigEnvTest, AVariableWinsOverTheFileForEveryKindOfValue) {
  StatusOr<AppConfig> c = Parse({
      {"EXPORT_CENTER_CONSUMER__CONCURRENCY", "8"},
      {"EXPORT_CENTER_CONSUMER__ENABLED", "false"},
      {"EXPORT_CENTER_CONSUMER__RETRY_BACKOFF_SECONDS", "30, 600"},
      {"EXPORT_CENTER_PUBLISHER__BACKOFF_SECONDS", "[1, 2, 3]"},
      {"EXPORT_CENTER_CHANNEL__ROCKETMQ__TOPIC_PREFIX", "staging-"},
      {"EXPORT_CENTER_STORAGE__S3__REGION", "eu-west-1"},
      {"EXPORT_CENTER_DATASOURCES__ORDERS_REPLICA__STATEMENT_TIMEOUT_MS", "5000"},
      {"EXPORT_CENTER_NOTIFICATIONS__ALLOWED_TARGETS", "hooks.example.com:443,10.0.0.7:9100"},
      {"EXPORT_CENTER_INSTANCE_ID", "pod-7"},
      {"EXPORT_CENTER_LOGGING__LEVEL", "debug"},
  });
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->consumer.concurrency, 8);
  EXPECT_FALSE(c->consumer.enabled);
  EXPECT_EQ(c->consumer.retry_backoff_seconds, (std::vector<int>{30, 600}));
  EXPECT_EQ(c->publisher.backoff_seconds, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(c->channel.rocketmq.topic_prefix.value_or("(unset)"), "staging-");
  EXPECT_EQ(c->storage.s3.region, "eu-west-1");
  EXPECT_EQ(c->datasources["orders-replica"].statement_timeout_ms, 5000);
  EXPECT_EQ(c->notifications.allowed_targets,
            (std::vector<std::string>{"hooks.example.com:443", "10.0.0.7:9100"}));
  EXPECT_EQ(c->instance_id, "pod-7");
  EXPECT_EQ(c->logging.level, "debug");
  EXPECT_EQ(c->server.port, 9090) << "the file's value where no variable is set";
  EXPECT_EQ(c->env_overrides.size(), 10u);
}

// auth.claims.* like every other key: the claim mapping of a token issuer
// that differs per deployment, with or without a claims section in the file.
TEST(ConfigEnvTest, TheClaimMappingComesFromTheEnvironmentToo) {
  const Vars vars = {{"EXPORT_CENTER_AUTH__CLAIMS__USER", "preferred_username"},
                     {"EXPORT_CENTER_AUTH__CLAIMS__TENANT", "org.id"},
                     {"EXPORT_CENTER_AUTH__CLAIMS__APP", "app"},
                     {"EXPORT_CENTER_AUTH__CLAIMS__APP_DEFAULT", "MERCHANT"},
                     {"EXPORT_CENTER_AUTH__CLAIMS__PERMISSIONS", "scope,realm_access.roles"},
                     {"EXPORT_CENTER_AUTH__CLAIMS__PERMISSION_PREFIX", "export:"},
                     {"EXPORT_CENTER_SERVER__EVENTS_TICKETS_PER_USER", "12"}};
  std::string with_claims = kFile;
  with_claims.replace(with_claims.find("auth:\n"), 6,
                      "auth:\n  claims: {user: sub, tenant: tenant_id}\n");
  for (const std::string& file : {std::string(kFile), with_claims}) {
    StatusOr<AppConfig> c = Parse(vars, file);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->auth.claim_user, "preferred_username");
    EXPECT_EQ(c->auth.claim_tenant, "org.id");
    EXPECT_EQ(c->auth.claim_app, "app");
    EXPECT_EQ(c->auth.app_code_default, "MERCHANT");
    EXPECT_EQ(c->auth.claim_permissions, (std::vector<std::string>{"scope", "realm_access.roles"}));
    EXPECT_EQ(c->auth.permission_prefix, "export:");
    EXPECT_EQ(c->server.events_tickets_per_user, 12);
    const SettingSource* user = SourceOf(*c, "auth.claims.user");
    ASSERT_NE(user, nullptr);
    EXPECT_EQ(user->origin, "EXPORT_CENTER_AUTH__CLAIMS__USER");
  }
  ExpectProblem({{"EXPORT_CENTER_AUTH__CLAIMS__APP_DEFAULT", "OTHER"}},
                "auth.claims.app-default (from EXPORT_CENTER_AUTH__CLAIMS__APP_DEFAULT)");
}

TEST(ConfigEnvTest, BlankIsUnsetAndTwoQuotesAreTheEmptyString) {
  StatusOr<AppConfig> c =
      Parse({{"EXPORT_CENTER_CONSUMER__CONCURRENCY", ""},
             {"EXPORT_CENTER_CHANNEL__ROCKETMQ__TOPIC_PREFIX", "\"\""},
             {"EXPORT_CENTER_NOTIFICATIONS__ALLOWED_TARGETS", "\"\""}},
            std::string(kFile) + "notifications: {allowed-targets: [\"a.example:443\"]}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->consumer.concurrency, 2);
  ASSERT_TRUE(c->channel.rocketmq.topic_prefix.has_value());
  EXPECT_EQ(*c->channel.rocketmq.topic_prefix, "");
  EXPECT_TRUE(c->notifications.allowed_targets.empty()) << "the file's list, emptied";
}

TEST(ConfigEnvTest, EachSettingSaysWhereItsValueCameFromWithoutShowingSecrets) {
  StatusOr<AppConfig> c =
      Parse({{"EXPORT_CENTER_CONSUMER__CONCURRENCY", "8"},
             {"EXPORT_CENTER_JWT_SECRET", "env-secret-0123456789abcdef0123456789"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const SettingSource* concurrency = SourceOf(*c, "consumer.concurrency");
  ASSERT_NE(concurrency, nullptr);
  EXPECT_EQ(concurrency->origin, "EXPORT_CENTER_CONSUMER__CONCURRENCY");
  EXPECT_EQ(concurrency->shown, "8");
  const SettingSource* port = SourceOf(*c, "server.port");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->origin, "file");
  EXPECT_EQ(port->shown, "9090");
  const SettingSource* retention = SourceOf(*c, "limits.retention-days");
  ASSERT_NE(retention, nullptr);
  EXPECT_EQ(retention->origin, "default");
  EXPECT_EQ(retention->shown, "7");
  const SettingSource* jwt = SourceOf(*c, "auth.jwt-hs256-secret");
  ASSERT_NE(jwt, nullptr);
  EXPECT_EQ(jwt->origin, "EXPORT_CENTER_JWT_SECRET");
  EXPECT_EQ(jwt->shown, "(hidden)");
  for (const SettingSource& s : c->settings) {
    EXPECT_EQ(s.shown.find("secret-0123"), std::string::npos) << s.key;
    EXPECT_EQ(s.shown.find("download-0123"), std::string::npos) << s.key;
  }
}

TEST(ConfigEnvTest, AProblemInAVariableNamesIt) {
  ExpectProblem({{"EXPORT_CENTER_CONSUMER__CONCURRENCY", "0"}},
                "consumer.concurrency (from EXPORT_CENTER_CONSUMER__CONCURRENCY): 0 is out of "
                "range; allowed: [1, 64]");
  ExpectProblem({{"EXPORT_CENTER_CONSUMER__ENABLED", "yes"}},
                "consumer.enabled (from EXPORT_CENTER_CONSUMER__ENABLED): \"yes\" is not a "
                "boolean; allowed: true, false");
}

TEST(ConfigEnvTest, AVariableThatNamesNoSettingStopsTheStart) {
  // One underscore where the rule has two: the nearest name is suggested.
  ExpectProblem({{"EXPORT_CENTER_CONSUMER_CONCURRENCY", "8"}},
                "EXPORT_CENTER_CONSUMER_CONCURRENCY: names no setting (did you mean "
                "'EXPORT_CENTER_CONSUMER__CONCURRENCY'?)");
  // A datasource the file does not declare, a misspelt section, a registry key.
  ExpectProblem({{"EXPORT_CENTER_DATASOURCES__NOPE__URL", "sqlite.db"}},
                "EXPORT_CENTER_DATASOURCES__NOPE__URL: names no setting");
  ExpectProblem({{"EXPORT_CENTER_CONSUMR__CONCURRENCY", "8"}},
                "EXPORT_CENTER_CONSUMR__CONCURRENCY: names no setting (did you mean "
                "'EXPORT_CENTER_CONSUMER__CONCURRENCY'?)");
  ExpectProblem({{"EXPORT_CENTER_JWT_SECRT", "x"}},
                "EXPORT_CENTER_JWT_SECRT: names no setting (did you mean "
                "'EXPORT_CENTER_JWT_SECRET'?)");
  // Other tools' variables and a declared provider service's token are not typos.
  StatusOr<AppConfig> c =
      Parse({{"EXPORT_CENTER_FAILPOINTS", "thread.consumer"},
             {"EXPORT_CENTER_BUILD_JOBS", "2"},
             {"EXPORT_CENTER_PROVIDER_TOKEN_CUSTOMER_SERVICE", "env-token-0123456789abcdef"}});
  EXPECT_TRUE(c.ok()) << c.status().ToString();
}

TEST(ConfigEnvTest, TheOlderNamesStayAliasesAndMustAgreeWithTheRulesName) {
  StatusOr<AppConfig> c =
      Parse({{"EXPORT_CENTER_S3_SECRET_KEY", "s3-secret"},
             {"EXPORT_CENTER_DATASOURCE_URL_ORDERS_REPLICA", "replica-2.db"},
             {"EXPORT_CENTER_AUTH__JWT_HS256_SECRET", "same-0123456789abcdef0123456789abc"},
             {"EXPORT_CENTER_JWT_SECRET", "same-0123456789abcdef0123456789abc"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->storage.s3.secret_key, "s3-secret");
  EXPECT_EQ(c->datasources["orders-replica"].url, "replica-2.db");
  EXPECT_EQ(c->auth.jwt_hs256_secret, "same-0123456789abcdef0123456789abc");
  ExpectProblem({{"EXPORT_CENTER_AUTH__JWT_HS256_SECRET", "one-0123456789abcdef0123456789"},
                 {"EXPORT_CENTER_JWT_SECRET", "two-0123456789abcdef0123456789"}},
                "auth.jwt-hs256-secret: EXPORT_CENTER_AUTH__JWT_HS256_SECRET and "
                "EXPORT_CENTER_JWT_SECRET are both set, to different values; allowed: set one "
                "of them");
}

}  // namespace
}  // namespace export_center::config
