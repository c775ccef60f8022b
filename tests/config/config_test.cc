#include "config/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/registry_yaml.h"

namespace export_center::config {
namespace {

// The smallest valid file: the two required secrets.
const char kMinimal[] = R"(
auth:
  jwt-hs256-secret: test-secret-0123456789abcdef0123456789
  download-url-secret: test-download-0123456789abcdef0123456789
  jwt-issuer: test-issuer
  jwt-audience: export-center
)";

#ifdef EXPORT_CENTER_WITH_ROCKETMQ
const std::string kBuiltChannels = "embedded, rocketmq";
#else
const std::string kBuiltChannels = "embedded";
#endif

StatusOr<AppConfig> Parse(const std::string& yaml) { return ParseConfig(yaml, "test.yaml"); }

// Expects failure with a line of the message starting with `line`.
void ExpectProblem(const std::string& yaml, const std::string& line) {
  StatusOr<AppConfig> result = Parse(yaml);
  ASSERT_FALSE(result.ok()) << "expected: " << line;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("\n" + line), std::string::npos)
      << "expected line: " << line << "\ngot:\n"
      << result.status().message();
}

// Unsets the env vars a test may set, whatever the outcome.
class ConfigTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"EXPORT_CENTER_DATABASE_URL", "EXPORT_CENTER_JWT_SECRET",
                             "EXPORT_CENTER_DOWNLOAD_URL_SECRET", "CUSTOMER_SERVICE_INTERNAL_TOKEN",
                             "EXPORT_CENTER_DATASOURCE_URL_ORDERS_REPLICA",
                             "EXPORT_CENTER_S3_ACCESS_KEY", "EXPORT_CENTER_S3_SECRET_KEY",
                             "EXPORT_CENTER_ROCKETMQ_NAMESRV", "EXPORT_CENTER_ROCKETMQ_ACCESS_KEY",
                             "EXPORT_CENTER_ROCKETMQ_SECRET_KEY", "EXPORT_CENTER_METRICS_TOKEN"}) {
      unsetenv(name);
    }
  }
};

TEST_F(ConfigTest, Defaults) {
  StatusOr<AppConfig> c = Parse(kMinimal);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->path, "test.yaml");
  EXPECT_EQ(c->instance_id, [] {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    return std::string(host) + ":" + std::to_string(getpid());
  }());
  EXPECT_EQ(c->server.host, "127.0.0.1");
  EXPECT_EQ(c->server.port, 8080);
  EXPECT_EQ(c->server.public_base_url, "http://127.0.0.1:8080");
  EXPECT_EQ(c->server.threads, 8);
  EXPECT_EQ(c->server.io_threads, 1);
  EXPECT_EQ(c->server.header_timeout_seconds, 10);
  EXPECT_EQ(c->server.max_connections, 4096);
  EXPECT_EQ(c->server.max_connections_per_address, 256);
  EXPECT_EQ(c->server.events_max_streams, 1000);
  EXPECT_EQ(c->server.events_max_streams_per_user, 5);
  EXPECT_EQ(c->server.events_poll_interval_ms, 1000);
  EXPECT_EQ(c->database.kind, "sqlite");
  EXPECT_EQ(c->database.sqlite.path, "var/export-center.db");
  EXPECT_EQ(c->storage.root, "var/files");
  EXPECT_EQ(c->limits.max_file_bytes, 50LL * 1024 * 1024);
  EXPECT_EQ(c->limits.retention_days, 7);
  EXPECT_EQ(c->limits.max_active_per_user, 3);
  EXPECT_EQ(c->limits.max_active_per_type, 5);
  EXPECT_EQ(c->consumer.concurrency, 4);
  EXPECT_EQ(c->consumer.lease_seconds, 300);
  EXPECT_EQ(c->consumer.heartbeat_seconds, 60);
  EXPECT_EQ(c->consumer.max_duration_seconds, 1800);
  EXPECT_EQ(c->consumer.retry_backoff_seconds, (std::vector<int>{60, 900}));
  EXPECT_EQ(c->publisher.poll_interval_ms, 5000);
  EXPECT_EQ(c->publisher.batch_size, 50);
  EXPECT_EQ(c->publisher.lease_seconds, 60);
  EXPECT_EQ(c->publisher.backoff_seconds, (std::vector<int>{5, 15, 60, 300, 900}));
  EXPECT_EQ(c->reconciler.interval_seconds, 30);
  EXPECT_EQ(c->reconciler.redispatch_grace_seconds, 60);
  EXPECT_EQ(c->reconciler.sent_stale_seconds, 600);
  EXPECT_EQ(c->provider.connect_timeout_ms, 3000);
  EXPECT_EQ(c->provider.read_timeout_ms, 15000);
  EXPECT_EQ(c->channel.kind, "embedded");
  EXPECT_TRUE(c->publisher.enabled && c->consumer.enabled && c->reconciler.enabled);
  EXPECT_EQ(c->logging.level, "info");
  EXPECT_TRUE(c->datasources.empty());
  EXPECT_TRUE(c->env_overrides.empty());
}

TEST_F(ConfigTest, EveryKeyOverrides) {
  StatusOr<AppConfig> c = Parse(std::string(kMinimal) + R"(
  jwt-rs256-private-key-file: key.pem
  download-url-ttl-seconds: 60
  jwt-leeway-seconds: 5
  metrics-bearer-token: scrape-token-0123456789
instance-id: worker-7
logging: {level: debug}
server:
  host: 0.0.0.0
  port: 9000
  threads: 4
  io-threads: 2
  header-timeout-seconds: 5
  body-timeout-seconds: 20
  keep-alive-timeout-seconds: 15
  send-timeout-seconds: 40
  max-connections: 2000
  max-connections-per-address: 100
  events-max-streams: 300
  events-max-streams-per-user: 2
  events-poll-interval-ms: 500
  events-ticket-ttl-seconds: 10
database: {kind: postgres, sqlite-path: x.db, postgres-url: "postgresql://u:p@db:5432/ec", pool-size: 16}
storage: {kind: local, root: /data/files}
limits:
  dedupe-window-seconds: 30
  max-active-per-user: 2
  max-active-per-type: 9
  max-file-bytes: 1048576
  retention-days: 3
  max-body-bytes: 32768
  max-parameter-keys: 10
  max-parameter-json-bytes: 2048
  max-parameter-string-chars: 128
consumer:
  enabled: false
  concurrency: 8
  lease-seconds: 120
  heartbeat-seconds: 20
  max-duration-seconds: 600
  retry-backoff-seconds: [10, 20, 30]
  shutdown-grace-seconds: 5
publisher: {enabled: false, poll-interval-ms: 1000, batch-size: 10, lease-seconds: 30, backoff-seconds: [1, 2]}
reconciler:
  enabled: false
  interval-seconds: 5
  redispatch-grace-seconds: 10
  sent-stale-seconds: 100
  orphan-grace-seconds: 3600
  sent-retention-seconds: 7200
channel: {kind: embedded, delivery-limit: 5}
provider: {connect-timeout-ms: 1000, read-timeout-ms: 2000, max-response-bytes: 2048}
customer-service:
  host: 0.0.0.0
  port: 9001
  sqlite-path: cs.db
  internal-token: tok-0123456789abcdef
  snapshot-secret: snap-0123456789abcdef0123456789abcd
  seed-customers: 10
  seed-orders: 25
  contract-version: 7
datasources:
  orders-replica: {kind: postgres, url: "postgresql://r@replica/orders"}
  local: {kind: sqlite, sqlite-path: local.db}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->instance_id, "worker-7");
  EXPECT_EQ(c->logging.level, "debug");
  EXPECT_EQ(c->server.host, "0.0.0.0");
  EXPECT_EQ(c->server.events_ticket_ttl_seconds, 10);
  EXPECT_EQ(c->auth.jwt_leeway_seconds, 5);
  EXPECT_EQ(c->auth.metrics_bearer_token, "scrape-token-0123456789");
  EXPECT_EQ(c->server.port, 9000);
  EXPECT_EQ(c->server.threads, 4);
  EXPECT_EQ(c->server.public_base_url, "http://127.0.0.1:9000");  // wildcard → loopback
  EXPECT_EQ(c->server.io_threads, 2);
  EXPECT_EQ(c->server.header_timeout_seconds, 5);
  EXPECT_EQ(c->server.body_timeout_seconds, 20);
  EXPECT_EQ(c->server.keep_alive_timeout_seconds, 15);
  EXPECT_EQ(c->server.send_timeout_seconds, 40);
  EXPECT_EQ(c->server.max_connections, 2000);
  EXPECT_EQ(c->server.max_connections_per_address, 100);
  EXPECT_EQ(c->server.events_max_streams, 300);
  EXPECT_EQ(c->server.events_max_streams_per_user, 2);
  EXPECT_EQ(c->server.events_poll_interval_ms, 500);
  EXPECT_EQ(c->database.kind, "postgres");
  EXPECT_EQ(c->database.postgres.url, "postgresql://u:p@db:5432/ec");
  EXPECT_EQ(c->database.pool_size, 16);
  EXPECT_EQ(c->storage.root, "/data/files");
  EXPECT_EQ(c->auth.jwt_rs256_private_key_file, "key.pem");
  EXPECT_EQ(c->auth.download_url_ttl_seconds, 60);
  EXPECT_EQ(c->limits.dedupe_window_seconds, 30);
  EXPECT_EQ(c->limits.max_active_per_user, 2);
  EXPECT_EQ(c->limits.max_active_per_type, 9);
  EXPECT_EQ(c->limits.max_file_bytes, 1048576);
  EXPECT_EQ(c->limits.retention_days, 3);
  EXPECT_EQ(c->limits.max_body_bytes, 32768);
  EXPECT_EQ(c->limits.max_parameter_keys, 10);
  EXPECT_EQ(c->limits.max_parameter_json_bytes, 2048);
  EXPECT_EQ(c->limits.max_parameter_string_chars, 128);
  EXPECT_FALSE(c->consumer.enabled);
  EXPECT_EQ(c->consumer.concurrency, 8);
  EXPECT_EQ(c->consumer.lease_seconds, 120);
  EXPECT_EQ(c->consumer.heartbeat_seconds, 20);
  EXPECT_EQ(c->consumer.max_duration_seconds, 600);
  EXPECT_EQ(c->consumer.retry_backoff_seconds, (std::vector<int>{10, 20, 30}));
  EXPECT_EQ(c->consumer.shutdown_grace_seconds, 5);
  EXPECT_FALSE(c->publisher.enabled);
  EXPECT_EQ(c->publisher.poll_interval_ms, 1000);
  EXPECT_EQ(c->publisher.batch_size, 10);
  EXPECT_EQ(c->publisher.lease_seconds, 30);
  EXPECT_EQ(c->publisher.backoff_seconds, (std::vector<int>{1, 2}));
  EXPECT_FALSE(c->reconciler.enabled);
  EXPECT_EQ(c->reconciler.interval_seconds, 5);
  EXPECT_EQ(c->reconciler.redispatch_grace_seconds, 10);
  EXPECT_EQ(c->reconciler.sent_stale_seconds, 100);
  EXPECT_EQ(c->reconciler.orphan_grace_seconds, 3600);
  EXPECT_EQ(c->reconciler.sent_retention_seconds, 7200);
  EXPECT_EQ(c->channel.kind, "embedded");
  EXPECT_EQ(c->channel.delivery_limit, 5);
  EXPECT_EQ(c->provider.connect_timeout_ms, 1000);
  EXPECT_EQ(c->provider.read_timeout_ms, 2000);
  EXPECT_EQ(c->provider.max_response_bytes, 2048);
  ASSERT_EQ(c->datasources.size(), 2u);
  EXPECT_EQ(c->datasources["orders-replica"].kind, "postgres");
  EXPECT_EQ(c->datasources["orders-replica"].url, "postgresql://r@replica/orders");
  EXPECT_EQ(c->datasources["local"].sqlite_path, "local.db");
}

TEST_F(ConfigTest, PublicBaseUrlKeptWithoutTrailingSlash) {
  StatusOr<AppConfig> c = Parse(std::string(kMinimal) +
                                "server: {public-base-url: \"https://files.example.com/ec/\"}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.public_base_url, "https://files.example.com/ec");
  ExpectProblem(std::string(kMinimal) + "server: {public-base-url: \"files?x\"}\n",
                "server.public-base-url: \"files?x\" is not a URL");
}

TEST_F(ConfigTest, PageFrameAncestorsTakeCspSourcesOnly) {
  StatusOr<AppConfig> c = Parse(std::string(kMinimal));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.page_frame_ancestors, "'self'");
  c = Parse(std::string(kMinimal) +
            "server: {page-frame-ancestors: \"'self' https://shell.example.com:8443 "
            "https://*.corp.example\"}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.page_frame_ancestors,
            "'self' https://shell.example.com:8443 https://*.corp.example");
  // A ';' would add a directive of its own to the page's policy.
  ExpectProblem(
      std::string(kMinimal) + "server: {page-frame-ancestors: \"'self'; script-src *\"}\n",
      "server.page-frame-ancestors");
  ExpectProblem(std::string(kMinimal) + "server: {page-frame-ancestors: \"  \"}\n",
                "server.page-frame-ancestors");
}

TEST_F(ConfigTest, EnvironmentOverridesSecrets) {
  setenv("EXPORT_CENTER_DATABASE_URL", "postgresql://env@db/ec", 1);
  setenv("EXPORT_CENTER_JWT_SECRET", "env-jwt-secret-0123456789abcdef0123456789", 1);
  setenv("EXPORT_CENTER_DOWNLOAD_URL_SECRET", "env-download-secret-0123456789abcdef01234", 1);
  setenv("CUSTOMER_SERVICE_INTERNAL_TOKEN", "env-token-0123456789", 1);
  setenv("EXPORT_CENTER_DATASOURCE_URL_ORDERS_REPLICA", "mysql://env@replica/orders", 1);
  StatusOr<AppConfig> c = Parse(std::string(kMinimal) + R"(
database: {kind: postgres}
customer-service: {internal-token: file-token-0123456789}
datasources:
  orders-replica: {kind: mysql}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->database.postgres.url, "postgresql://env@db/ec");
  EXPECT_EQ(c->auth.jwt_hs256_secret, "env-jwt-secret-0123456789abcdef0123456789");
  EXPECT_EQ(c->auth.download_url_secret, "env-download-secret-0123456789abcdef01234");
  EXPECT_EQ(c->datasources["orders-replica"].url, "mysql://env@replica/orders");
  // CUSTOMER_SERVICE_INTERNAL_TOKEN belongs to the sample service, which
  // reads it itself (tests/sdk/customer_service_config_test.cc).
  EXPECT_EQ(c->env_overrides.size(), 4u);
}

TEST_F(ConfigTest, S3StorageIsReadCheckedAndTakesKeysFromTheEnvironment) {
  const std::string s3 = std::string(kMinimal) + R"(
storage:
  kind: s3
  s3:
    endpoint: http://127.0.0.1:9000
    region: eu-west-1
    bucket: exports
    access-key: file-access
    secret-key: file-secret
    path-style: true
    part-size-bytes: 16777216
    upload-queue-parts: 2
    download: presigned
    presign-ttl-seconds: 120
    presign-endpoint: https://files.example.com
    ca-cert-file: /etc/ssl/certs/ca-certificates.crt
)";
  StatusOr<AppConfig> c = Parse(s3);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->storage.kind, "s3");
  EXPECT_EQ(c->storage.s3.endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(c->storage.s3.region, "eu-west-1");
  EXPECT_EQ(c->storage.s3.bucket, "exports");
  EXPECT_EQ(c->storage.s3.access_key, "file-access");
  EXPECT_TRUE(c->storage.s3.path_style);
  EXPECT_EQ(c->storage.s3.part_size_bytes, 16 * 1024 * 1024);
  EXPECT_EQ(c->storage.s3.upload_queue_parts, 2);
  EXPECT_EQ(c->storage.s3.download, "presigned");
  EXPECT_EQ(c->storage.s3.presign_ttl_seconds, 120);
  EXPECT_EQ(c->storage.s3.presign_endpoint, "https://files.example.com");
  EXPECT_EQ(c->storage.s3.ca_cert_file, "/etc/ssl/certs/ca-certificates.crt");

  setenv("EXPORT_CENTER_S3_ACCESS_KEY", "env-access", 1);
  setenv("EXPORT_CENTER_S3_SECRET_KEY", "env-secret", 1);
  c = Parse(s3);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->storage.s3.access_key, "env-access");
  EXPECT_EQ(c->storage.s3.secret_key, "env-secret");
  unsetenv("EXPORT_CENTER_S3_ACCESS_KEY");
  unsetenv("EXPORT_CENTER_S3_SECRET_KEY");

  // Defaults, and what is required.
  StatusOr<AppConfig> d = Parse(kMinimal);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->storage.s3.part_size_bytes, 8 * 1024 * 1024);
  EXPECT_EQ(d->storage.s3.download, "stream");
  EXPECT_FALSE(d->storage.s3.path_style);
  EXPECT_EQ(d->storage.s3.presign_endpoint, "");  // presigned URLs then use the endpoint
  EXPECT_EQ(d->storage.s3.ca_cert_file, "");      // the system trust store
  ExpectProblem(std::string(kMinimal) + "storage: {kind: s3}\n",
                "storage.s3.endpoint: is required when storage.kind is s3");
  ExpectProblem(std::string(kMinimal) + "storage: {kind: s3}\n",
                "storage.s3.bucket: is required when storage.kind is s3");
  ExpectProblem(std::string(kMinimal) + "storage: {kind: s3}\n",
                "storage.s3.secret-key: is required when storage.kind is s3 (or set "
                "EXPORT_CENTER_S3_SECRET_KEY)");
  ExpectProblem(
      std::string(kMinimal) + "storage: {kind: s3, s3: {endpoint: \"s3.example.com/x\"}}\n",
      "storage.s3.endpoint: \"s3.example.com/x\" is not an endpoint URL");
  ExpectProblem(std::string(kMinimal) + "storage: {s3: {part-size-bytes: 1048576}}\n",
                "storage.s3.part-size-bytes:");
  ExpectProblem(std::string(kMinimal) + "storage: {s3: {download: direct}}\n",
                "storage.s3.download:");
  ExpectProblem(std::string(kMinimal) + "storage: {s3: {bucket-name: x}}\n",
                "storage.s3.bucket-name:");
  ExpectProblem(
      std::string(kMinimal) +
          "storage: {kind: s3, s3: {presign-endpoint: \"https://files.example.com/dl\"}}\n",
      "storage.s3.presign-endpoint: \"https://files.example.com/dl\" is not an endpoint URL");
  ExpectProblem(
      std::string(kMinimal) + "storage: {kind: s3, s3: {presign-endpoint: files.example.com}}\n",
      "storage.s3.presign-endpoint: \"files.example.com\" is not an endpoint URL");
  ExpectProblem(
      std::string(kMinimal) + "storage: {kind: s3, s3: {ca-cert-file: /nonexistent/s3-ca.pem}}\n",
      "storage.s3.ca-cert-file: \"/nonexistent/s3-ca.pem\" cannot be read");
}

TEST_F(ConfigTest, SecretsFromEnvironmentAlone) {
  setenv("EXPORT_CENTER_JWT_SECRET", "env-jwt-secret-0123456789abcdef0123456789", 1);
  setenv("EXPORT_CENTER_DOWNLOAD_URL_SECRET", "env-download-secret-0123456789abcdef01234", 1);
  // iss and aud are not secrets: they stay in the file.
  StatusOr<AppConfig> c = Parse("auth: {jwt-issuer: i, jwt-audience: a}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
}

TEST_F(ConfigTest, EmptyEnvironmentVariableIsIgnored) {
  setenv("EXPORT_CENTER_JWT_SECRET", "", 1);
  StatusOr<AppConfig> c = Parse(kMinimal);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->auth.jwt_hs256_secret, "test-secret-0123456789abcdef0123456789");
}

TEST_F(ConfigTest, ConnectionCapsAreConsistent) {
  ExpectProblem(
      std::string(kMinimal) + "server: {max-connections: 100, max-connections-per-address: 101}\n",
      "server.max-connections-per-address: 101 must not exceed server.max-connections "
      "(100)");
  ExpectProblem(std::string(kMinimal) + "server: {header-timeout-seconds: 0}\n",
                "server.header-timeout-seconds: 0 is out of range; allowed: [1, 300]");
  ExpectProblem(std::string(kMinimal) + "server: {events-poll-interval-ms: 10}\n",
                "server.events-poll-interval-ms: 10 is out of range; allowed: [100, 60000]");
  ExpectProblem(std::string(kMinimal) + "server: {events-max-streams-per-user: 0}\n",
                "server.events-max-streams-per-user: 0 is out of range; allowed: [1, 1000]");
}

TEST_F(ConfigTest, PreviewSection) {
  StatusOr<AppConfig> d = Parse(kMinimal);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->preview.timeout_seconds, 10);
  EXPECT_EQ(d->preview.rows, 20);
  EXPECT_EQ(d->preview.per_user_per_minute, 10);
  EXPECT_EQ(d->preview.max_running, 8);
  StatusOr<AppConfig> c =
      Parse(std::string(kMinimal) +
            "preview: {timeout-seconds: 3, rows: 5, per-user-per-minute: 2, max-running: 1}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->preview.timeout_seconds, 3);
  EXPECT_EQ(c->preview.rows, 5);
  EXPECT_EQ(c->preview.per_user_per_minute, 2);
  EXPECT_EQ(c->preview.max_running, 1);
  ExpectProblem(std::string(kMinimal) + "preview: {timeout-seconds: 61}\n",
                "preview.timeout-seconds: 61 is out of range; allowed: [1, 60]");
  ExpectProblem(std::string(kMinimal) + "preview: {rows: 0}\n",
                "preview.rows: 0 is out of range; allowed: [1, 100]");
}

TEST_F(ConfigTest, RangeErrors) {
  ExpectProblem(std::string(kMinimal) + "server: {port: 0}\n",
                "server.port: 0 is out of range; allowed: [1, 65535]");
  ExpectProblem(std::string(kMinimal) + "server: {port: 65536}\n",
                "server.port: 65536 is out of range; allowed: [1, 65535]");
  ExpectProblem(std::string(kMinimal) + "consumer: {concurrency: 65}\n",
                "consumer.concurrency: 65 is out of range; allowed: [1, 64]");
  ExpectProblem(std::string(kMinimal) + "consumer: {concurrency: 0}\n",
                "consumer.concurrency: 0 is out of range; allowed: [1, 64]");
  ExpectProblem(std::string(kMinimal) + "limits: {max-file-bytes: 10}\n",
                "limits.max-file-bytes: 10 is out of range; allowed: [1024, 10737418240]");
  ExpectProblem(std::string(kMinimal) + "publisher: {backoff-seconds: [5, 0]}\n",
                "publisher.backoff-seconds[1]: 0 is out of range; allowed: [1, 86400]");
  ExpectProblem(std::string(kMinimal) + "publisher: {backoff-seconds: []}\n",
                "publisher.backoff-seconds: expected a non-empty list of integers");
}

TEST_F(ConfigTest, TypeErrors) {
  ExpectProblem(std::string(kMinimal) + "server: {port: http}\n",
                "server.port: \"http\" is not an integer; allowed: [1, 65535]");
  ExpectProblem(std::string(kMinimal) + "server: {port: 80.5}\n",
                "server.port: \"80.5\" is not an integer");
  ExpectProblem(std::string(kMinimal) + "server: {port: [1]}\n",
                "server.port: expected an integer, got a list");
  ExpectProblem(std::string(kMinimal) + "consumer: {enabled: on}\n",
                "consumer.enabled: \"on\" is not a boolean; allowed: true, false");
  ExpectProblem(std::string(kMinimal) + "server: {host: {a: 1}}\n",
                "server.host: expected a string, got a mapping");
  ExpectProblem(std::string(kMinimal) + "server: 8080\n",
                "server: expected a mapping of keys, got a scalar");
  ExpectProblem(std::string(kMinimal) + "database: {kind: oracle}\n",
                "database.kind: \"oracle\" is not supported; allowed: sqlite, postgres");
  ExpectProblem(std::string(kMinimal) + "channel: {kind: kafka}\n",
                "channel.kind: \"kafka\" is not supported; allowed: " + kBuiltChannels);
  // A channel that is not built is refused by the config check, not at start-up.
  ExpectProblem(std::string(kMinimal) + "channel: {kind: rabbitmq}\n",
                "channel.kind: \"rabbitmq\" is not supported; allowed: " + kBuiltChannels);
  ExpectProblem(std::string(kMinimal) + "channel: {rabbitmq-url: \"amqp://x\"}\n",
                "channel.rabbitmq-url: unknown key");
  ExpectProblem(
      std::string(kMinimal) + "logging: {level: loud}\n",
      "logging.level: \"loud\" is not supported; allowed: trace, debug, info, warn, error");
}

#ifdef EXPORT_CENTER_WITH_ROCKETMQ
TEST_F(ConfigTest, RocketMqChannel) {
  StatusOr<AppConfig> c = Parse(std::string(kMinimal) + R"(
channel:
  kind: rocketmq
  delivery-limit: 3
  rocketmq:
    namesrv-addr: "10.0.0.1:9876;mq-2.internal:9876"
    topic-prefix: test-
    send-timeout-ms: 2000
    consume-timeout-ms: 4000
    undecodable-max-pulls: 5
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->channel.rocketmq.undecodable_max_pulls, 5);
  EXPECT_EQ(c->channel.kind, "rocketmq");
  EXPECT_EQ(c->channel.rocketmq.namesrv_addr, "10.0.0.1:9876;mq-2.internal:9876");
  EXPECT_EQ(c->channel.rocketmq.topic_prefix, "test-");
  EXPECT_EQ(c->channel.rocketmq.send_timeout_ms, 2000);
  EXPECT_EQ(c->channel.rocketmq.consume_timeout_ms, 4000);
}

TEST_F(ConfigTest, RocketMqEmptyPrefixIsAValidExplicitChoice) {
  for (const char* empty : {"\"\"", "''"}) {
    StatusOr<AppConfig> c = Parse(std::string(kMinimal) +
                                  "channel: {kind: rocketmq, rocketmq: {namesrv-addr: "
                                  "\"127.0.0.1:9876\", topic-prefix: " +
                                  empty + "}}\n");
    ASSERT_TRUE(c.ok()) << empty << ": " << c.status().ToString();
    ASSERT_TRUE(c->channel.rocketmq.topic_prefix.has_value());
    EXPECT_EQ(*c->channel.rocketmq.topic_prefix, "");
    EXPECT_EQ(c->channel.rocketmq.send_timeout_ms, 3000);
    EXPECT_EQ(c->channel.rocketmq.undecodable_max_pulls, 3);
  }
}

TEST_F(ConfigTest, RocketMqPrefixMustBeExplicit) {
  const std::string missing =
      "channel.rocketmq.topic-prefix: is required when channel.kind is rocketmq, with no default";
  ExpectProblem(
      std::string(kMinimal) + "channel: {kind: rocketmq, rocketmq: {namesrv-addr: \"h:9876\"}}\n",
      missing);
  // "topic-prefix:" with nothing after it is null, not a choice.
  ExpectProblem(std::string(kMinimal) +
                    "channel:\n  kind: rocketmq\n  rocketmq:\n    namesrv-addr: h:9876\n"
                    "    topic-prefix:\n",
                missing);
  ExpectProblem(std::string(kMinimal) + "channel: {kind: rocketmq}\n", missing);
  // Only for rocketmq: the embedded channel has no topics.
  EXPECT_TRUE(Parse(std::string(kMinimal) + "channel: {kind: embedded}\n").ok());
}

TEST_F(ConfigTest, RocketMqValues) {
  const std::string head = std::string(kMinimal) + "channel: {kind: rocketmq, rocketmq: {";
  ExpectProblem(head + "topic-prefix: \"\"}}\n",
                "channel.rocketmq.namesrv-addr: is required when channel.kind is rocketmq (or "
                "set EXPORT_CENTER_ROCKETMQ_NAMESRV); allowed: host:port[;host:port...]");
  ExpectProblem(head + "topic-prefix: \"\", namesrv-addr: \"h:9876,h2:9876\"}}\n",
                "channel.rocketmq.namesrv-addr: \"h:9876,h2:9876\" is not a name-server list");
  ExpectProblem(head + "topic-prefix: \"\", namesrv-addr: \"http://h:9876\"}}\n",
                "channel.rocketmq.namesrv-addr: \"http://h:9876\" is not a name-server list");
  ExpectProblem(head + "topic-prefix: \"test.\", namesrv-addr: \"h:9876\"}}\n",
                "channel.rocketmq.topic-prefix: \"test.\" cannot start a RocketMQ topic or "
                "group name");
  ExpectProblem(std::string(kMinimal) + "publisher: {lease-seconds: 5}\n" +
                    "channel: {kind: rocketmq, rocketmq: {topic-prefix: \"\", namesrv-addr: "
                    "\"h:9876\", send-timeout-ms: 5000}}\n",
                "channel.rocketmq.send-timeout-ms: 5000 must be less than "
                "publisher.lease-seconds (5 s)");
  ExpectProblem(head + "topic-prefix: \"\", namesrv-addr: \"h:9876\", retries: 3}}\n",
                "channel.rocketmq.retries: unknown key");
  ExpectProblem(head + "topic-prefix: \"\", namesrv-addr: \"h:9876\", undecodable-max-pulls: 0}}\n",
                "channel.rocketmq.undecodable-max-pulls: 0 is out of range");
}

TEST_F(ConfigTest, RocketMqNameServerFromTheEnvironmentWins) {
  setenv("EXPORT_CENTER_ROCKETMQ_NAMESRV", "127.0.0.2:9876", 1);
  StatusOr<AppConfig> c =
      Parse(std::string(kMinimal) +
            "channel: {kind: rocketmq, rocketmq: {namesrv-addr: \"h:1\", topic-prefix: t-}}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->channel.rocketmq.namesrv_addr, "127.0.0.2:9876");
  // And it satisfies the requirement on its own.
  c = Parse(std::string(kMinimal) + "channel: {kind: rocketmq, rocketmq: {topic-prefix: t-}}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->channel.rocketmq.namesrv_addr, "127.0.0.2:9876");
}

TEST_F(ConfigTest, RocketMqCredentialsFromTheFileOrTheEnvironmentAndBothOrNeither) {
  const std::string head = std::string(kMinimal) +
                           "channel: {kind: rocketmq, rocketmq: {namesrv-addr: \"h:9876\", "
                           "topic-prefix: t-";
  StatusOr<AppConfig> c = Parse(head + "}}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->channel.rocketmq.access_key, "") << "unsigned unless configured";
  EXPECT_EQ(c->channel.rocketmq.secret_key, "");
  c = Parse(head + ", access-key: center, secret-key: file-secret}}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->channel.rocketmq.access_key, "center");
  EXPECT_EQ(c->channel.rocketmq.secret_key, "file-secret");

  // The secret need not live in the file.
  setenv("EXPORT_CENTER_ROCKETMQ_SECRET_KEY", "env-secret", 1);
  c = Parse(head + ", access-key: center}}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->channel.rocketmq.secret_key, "env-secret");
  setenv("EXPORT_CENTER_ROCKETMQ_ACCESS_KEY", "env-center", 1);
  c = Parse(head + ", access-key: center, secret-key: file-secret}}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->channel.rocketmq.access_key, "env-center");
  EXPECT_EQ(c->channel.rocketmq.secret_key, "env-secret");
  unsetenv("EXPORT_CENTER_ROCKETMQ_ACCESS_KEY");
  unsetenv("EXPORT_CENTER_ROCKETMQ_SECRET_KEY");

  ExpectProblem(head + ", access-key: center}}\n",
                "channel.rocketmq.secret-key: is required when channel.rocketmq.access-key is "
                "set (or set EXPORT_CENTER_ROCKETMQ_SECRET_KEY)");
  ExpectProblem(head + ", secret-key: s}}\n",
                "channel.rocketmq.access-key: is required when channel.rocketmq.secret-key is "
                "set (or set EXPORT_CENTER_ROCKETMQ_ACCESS_KEY)");
}
#endif

TEST_F(ConfigTest, TimingRules) {
  ExpectProblem(std::string(kMinimal) + "consumer: {lease-seconds: 60, heartbeat-seconds: 60}\n",
                "consumer.heartbeat-seconds: 60 must be less than consumer.lease-seconds (60)");
  ExpectProblem(
      std::string(kMinimal) + "consumer: {lease-seconds: 1800, max-duration-seconds: 1800}\n",
      "consumer.lease-seconds: 1800 must be less than consumer.max-duration-seconds (1800)");
}

TEST_F(ConfigTest, AuthRules) {
  ExpectProblem("auth: {download-url-secret: test-download-0123456789abcdef0123456789}\n",
                "auth.jwt-hs256-secret: one of auth.jwks-url, auth.jwks-file, "
                "auth.jwt-rs256-public-key-file and auth.jwt-hs256-secret (or "
                "EXPORT_CENTER_JWT_SECRET) is required");
  ExpectProblem(
      "auth: {jwt-hs256-secret: short, download-url-secret: "
      "test-download-0123456789abcdef0123456789}\n",
      "auth.jwt-hs256-secret: is too short (5 bytes); allowed: at least 32 bytes");
  ExpectProblem(
      "auth: {jwt-hs256-secret: test-secret-0123456789abcdef0123456789, download-url-secret: "
      "short}\n",
      "auth.download-url-secret: is too short (5 bytes); allowed: at least 16 bytes");
  ExpectProblem("auth: {jwt-hs256-secret: test-secret-0123456789abcdef0123456789}\n",
                "auth.download-url-secret: is required (or set EXPORT_CENTER_DOWNLOAD_URL_SECRET)");
  ExpectProblem(std::string(kMinimal) + "  jwt-rs256-public-key-file: /nonexistent/key.pem\n",
                "auth.jwt-rs256-public-key-file: \"/nonexistent/key.pem\" cannot be read");
}

// Without them any token the key signed would do, also one minted for another
// service: required in every file (docs/http-api.md#authentication).
TEST_F(ConfigTest, JwtIssuerAndAudienceAreRequiredAndLeewayDefaultsTo30) {
  const std::string secrets =
      "auth:\n  jwt-hs256-secret: test-secret-0123456789abcdef0123456789\n"
      "  download-url-secret: test-download-0123456789abcdef0123456789\n";
  ExpectProblem(secrets + "  jwt-audience: export-center\n",
                "auth.jwt-issuer: is required: the iss claim every accepted token carries");
  ExpectProblem(secrets + "  jwt-issuer: https://sso.example.com\n",
                "auth.jwt-audience: is required");
  ExpectProblem(std::string(kMinimal) + "  jwt-leeway-seconds: 301\n",
                "auth.jwt-leeway-seconds: 301 is out of range");
  StatusOr<AppConfig> c = Parse(kMinimal);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->auth.jwt_issuer, "test-issuer");
  EXPECT_EQ(c->auth.jwt_audience, "export-center");
  EXPECT_EQ(c->auth.jwt_leeway_seconds, 30);
  c = Parse(std::string(kMinimal) + "  jwt-leeway-seconds: 0\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->auth.jwt_leeway_seconds, 0);
}

// The identity provider's keys and token shape (docs/http-api.md#keys-from-a-jwks).
TEST_F(ConfigTest, JwksAndClaimMappingAreRead) {
  const std::string jwks_only =
      "auth:\n  download-url-secret: test-download-0123456789abcdef0123456789\n"
      "  jwt-issuer: https://sso.example.com/realms/main\n  jwt-audience: export-center\n"
      "  jwks-url: https://sso.example.com/realms/main/protocol/openid-connect/certs\n"
      "  jwks-refresh-min-interval-seconds: 10\n"
      "  claims:\n    user: preferred_username\n    tenant: org.tenant\n"
      "    app-default: MERCHANT\n    permissions: [realm_access.roles, scope]\n"
      "    permission-prefix: \"ec:\"\n";
  StatusOr<AppConfig> c = Parse(jwks_only);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->auth.jwks_refresh_min_interval_seconds, 10);
  EXPECT_EQ(c->auth.jwks_max_age_seconds, 3600);
  EXPECT_EQ(c->auth.claim_user, "preferred_username");
  EXPECT_EQ(c->auth.claim_tenant, "org.tenant");
  EXPECT_EQ(c->auth.claim_app, "app_code");
  EXPECT_EQ(c->auth.app_code_default, "MERCHANT");
  EXPECT_EQ(c->auth.claim_permissions, (std::vector<std::string>{"realm_access.roles", "scope"}));
  EXPECT_EQ(c->auth.permission_prefix, "ec:");
  c = Parse(kMinimal);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->auth.claim_permissions, (std::vector<std::string>{"perms"}));
  ExpectProblem(std::string(kMinimal) + "  jwks-url: http://sso.example.com/certs\n",
                "auth.jwks-url: \"http://sso.example.com/certs\" is not an https:// URL");
  EXPECT_TRUE(Parse(std::string(kMinimal) + "  jwks-url: http://127.0.0.1:8081/certs\n").ok());
  ExpectProblem(std::string(kMinimal) + "  claims: {app-default: ADMIN}\n",
                "auth.claims.app-default:");
  ExpectProblem(std::string(kMinimal) + "  claims: {roles: x}\n", "auth.claims.roles:");
  ExpectProblem(std::string(kMinimal) + "  jwks-file: /nonexistent/jwks.json\n",
                "auth.jwks-file: \"/nonexistent/jwks.json\" cannot be read");
}

// /metrics without a token only on a loopback listener (docs/observability.md#metrics).
TEST_F(ConfigTest, OpenMetricsAreRefusedOnANonLoopbackListener) {
  ExpectProblem(std::string(kMinimal) + "server: {host: 0.0.0.0}\n",
                "auth.metrics-bearer-token: is required when server.host is not a loopback "
                "address (it is \"0.0.0.0\")");
  ExpectProblem(std::string(kMinimal) + "server: {host: \"::\"}\n",
                "auth.metrics-bearer-token: is required");
  ExpectProblem(std::string(kMinimal) + "server: {host: 10.1.2.3}\n",
                "auth.metrics-bearer-token: is required");
  ExpectProblem(std::string(kMinimal) + "server: {host: exports.example.internal}\n",
                "auth.metrics-bearer-token: is required");
  ExpectProblem(std::string(kMinimal) + "server: {host: 127.0.0.1.example.com}\n",
                "auth.metrics-bearer-token: is required");
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
    StatusOr<AppConfig> c = Parse(std::string(kMinimal) + "server: {host: \"" + host + "\"}\n");
    EXPECT_TRUE(c.ok()) << host << ": " << c.status().ToString();
  }
  // The default host is loopback.
  EXPECT_TRUE(Parse(kMinimal).ok());
  StatusOr<AppConfig> with_token = Parse(std::string(kMinimal) +
                                         "  metrics-bearer-token: scrape-token-0123456789\n"
                                         "server: {host: 0.0.0.0}\n");
  EXPECT_TRUE(with_token.ok()) << with_token.status().ToString();
  setenv("EXPORT_CENTER_METRICS_TOKEN", "env-scrape-token-0123456789", 1);
  StatusOr<AppConfig> with_env = Parse(std::string(kMinimal) + "server: {host: 0.0.0.0}\n");
  EXPECT_TRUE(with_env.ok()) << with_env.status().ToString();
}

// One rule for every secret (config/secret_check.h), each named by its key:
// an unresolved `${...}` placeholder is refused (YAML expands nothing, so the
// literal text would become the secret), a metrics token is checked when set,
// third-party credentials only for a placeholder.
TEST_F(ConfigTest, SecretsThatArePlaceholdersOrTooShortAreRefused) {
  const std::string download = "download-url-secret: test-download-0123456789abcdef0123456789";
  const std::string jwt = "jwt-hs256-secret: test-secret-0123456789abcdef0123456789";
  ExpectProblem("auth: {jwt-hs256-secret: \"${EXPORT_CENTER_JWT_SECRET}\", " + download + "}\n",
                "auth.jwt-hs256-secret: is the unresolved placeholder ${EXPORT_CENTER_JWT_SECRET}: "
                "the configuration file expands no variables; set EXPORT_CENTER_JWT_SECRET "
                "instead");
  ExpectProblem("auth: {" + jwt + ", download-url-secret: \"${DL:-x}-0123456789abcdef\"}\n",
                "auth.download-url-secret: contains an unresolved ${...} placeholder");
  ExpectProblem(std::string(kMinimal) + "  metrics-bearer-token: short-token\n",
                "auth.metrics-bearer-token: is too short (11 bytes); allowed: at least 16 bytes");
  ExpectProblem(std::string(kMinimal) + "  metrics-bearer-token: \"${METRICS_TOKEN}\"\n",
                "auth.metrics-bearer-token: is the unresolved placeholder ${METRICS_TOKEN}");
  ExpectProblem(std::string(kMinimal) +
                    "channel:\n  kind: rocketmq\n  rocketmq: {namesrv-addr: \"127.0.0.1:9876\", "
                    "topic-prefix: \"\", access-key: ak, secret-key: \"${MQ_SECRET}\"}\n",
                "channel.rocketmq.secret-key: is the unresolved placeholder ${MQ_SECRET}");
  // Good values pass; an empty metrics token stays "off" here (its own rule is auth's).
  ASSERT_TRUE(
      Parse(std::string(kMinimal) + "  metrics-bearer-token: metrics-token-0123456789\n").ok());
  // A secret from the environment is checked as one from the file.
  setenv("EXPORT_CENTER_JWT_SECRET", "${NOT_EXPANDED}", 1);
  ExpectProblem(kMinimal, "auth.jwt-hs256-secret: is the unresolved placeholder ${NOT_EXPANDED}");
}

TEST_F(ConfigTest, Rs256PublicKeyAloneIsEnough) {
  std::string key =
      std::filesystem::temp_directory_path() / ("ec_key_" + std::to_string(getpid()) + ".pem");
  std::ofstream(key) << "-----BEGIN PUBLIC KEY-----\n";
  StatusOr<AppConfig> c =
      Parse("auth: {jwt-rs256-public-key-file: " + key +
            ", download-url-secret: test-download-0123456789abcdef0123456789, jwt-issuer: i, "
            "jwt-audience: a}\n");
  std::filesystem::remove(key);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
}

TEST_F(ConfigTest, MysqlTaskStore) {
  StatusOr<AppConfig> c = Parse(std::string(kMinimal) +
                                "database: {kind: mysql, mysql-url: "
                                "\"mysql://ec:p%40ss@db.internal:3307/export_center\", "
                                "pool-size: 12}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->database.kind, "mysql");
  EXPECT_EQ(c->database.mysql.url, "mysql://ec:p%40ss@db.internal:3307/export_center");
  EXPECT_EQ(c->database.pool_size, 12);
  EXPECT_TRUE(c->database.postgres.url.empty());
}

TEST_F(ConfigTest, DatabaseUrlFromTheEnvironmentGoesToTheKindInUse) {
  setenv("EXPORT_CENTER_DATABASE_URL", "mariadb://env:secret@db/ec", 1);
  StatusOr<AppConfig> c = Parse(std::string(kMinimal) +
                                "database: {kind: mysql, mysql-url: \"mysql://file@db/ec\", "
                                "postgres-url: \"postgresql://pg@db/ec\"}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->database.mysql.url, "mariadb://env:secret@db/ec");
  EXPECT_EQ(c->database.postgres.url, "postgresql://pg@db/ec") << "not the kind in use";
  EXPECT_EQ(c->env_overrides, std::vector<std::string>{"EXPORT_CENTER_DATABASE_URL"});
}

TEST_F(ConfigTest, MysqlUrlIsRequiredAndCheckedWithoutEchoingIt) {
  ExpectProblem(std::string(kMinimal) + "database: {kind: mysql}\n",
                "database.mysql-url: is required when database.kind is mysql (or set "
                "EXPORT_CENTER_DATABASE_URL)");
  for (const char* bad :
       {"postgresql://u:hunter2@db/ec", "mysql://u:hunter2@db", "mysql://u:hunter2@db/",
        "mysql://u:hunter2@db/ec?ssl=1", "u:hunter2@db/ec", "mysql:///ec"}) {
    SCOPED_TRACE(bad);
    StatusOr<AppConfig> c =
        Parse(std::string(kMinimal) + "database: {kind: mysql, mysql-url: \"" + bad + "\"}\n");
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("\ndatabase.mysql-url: is not a MySQL URL with a host and "
                                        "a database"),
              std::string::npos)
        << c.status().message();
    EXPECT_EQ(c.status().message().find("hunter2"), std::string::npos) << "no password in errors";
  }
  ExpectProblem(std::string(kMinimal) + "database: {kind: mysqll}\n",
                "database.kind: \"mysqll\" is not supported; allowed: sqlite, postgres, mysql");
}

TEST_F(ConfigTest, MysqlTlsKeysOfTheTaskStoreAndTheDatasources) {
  StatusOr<AppConfig> c = Parse(std::string(kMinimal) + R"(
database:
  kind: mysql
  mysql-url: "mysql://ec@db.internal/export_center"
  ssl-mode: verify-identity
  ssl-ca: /etc/export-center/db-ca.pem
  ssl-cert: /etc/export-center/db-client.pem
  ssl-key: /etc/export-center/db-client.key
datasources:
  orders: {kind: mysql, url: "mysql://ro@replica/orders", ssl-mode: required}
  plain: {kind: mysql, url: "mysql://ro@replica/orders"}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->database.mysql.tls.mode, TlsMode::kVerifyIdentity);
  EXPECT_EQ(c->database.mysql.tls.ca_file, "/etc/export-center/db-ca.pem");
  EXPECT_EQ(c->database.mysql.tls.cert_file, "/etc/export-center/db-client.pem");
  EXPECT_EQ(c->database.mysql.tls.key_file, "/etc/export-center/db-client.key");
  EXPECT_EQ(c->datasources["orders"].tls.mode, TlsMode::kRequired);
  EXPECT_EQ(c->datasources["plain"].tls.mode, TlsMode::kPreferred) << "MySQL's default";
  EXPECT_TRUE(c->datasources["plain"].tls.ca_file.empty());
}

TEST_F(ConfigTest, MysqlTlsKeysAreCheckedTogether) {
  const std::string db =
      std::string(kMinimal) + "database: {kind: mysql, mysql-url: " + "\"mysql://ec@db/ec\", ";
  ExpectProblem(db + "ssl-mode: verify-ca}\n",
                "database.ssl-ca: is required when ssl-mode is verify-ca");
  ExpectProblem(db + "ssl-mode: VERIFY_CA, ssl-ca: ca.pem}\n",
                "database.ssl-mode: \"VERIFY_CA\" is not supported; allowed: disabled, "
                "preferred, required, verify-ca, verify-identity");
  ExpectProblem(db + "ssl-cert: c.pem}\n", "database.ssl-key: ssl-cert and ssl-key go together");
  ExpectProblem(db + "ssl-mode: disabled, ssl-ca: ca.pem}\n",
                "database.ssl-mode: is disabled, but TLS files are set");
  ExpectProblem(std::string(kMinimal) + "database: {ssl-mode: required}\n",
                "database.ssl-mode: applies to kind mysql only (kind is sqlite)");
  ExpectProblem(std::string(kMinimal) +
                    "datasources: {pg: {kind: postgres, url: \"postgresql://h/d\", "
                    "ssl-ca: ca.pem}}\n",
                "datasources.pg.ssl-mode: applies to kind mysql only (kind is postgres)");
  ExpectProblem(std::string(kMinimal) +
                    "datasources: {ro: {kind: mysql, url: \"mysql://h/d\", "
                    "ssl-mode: verify-identity}}\n",
                "datasources.ro.ssl-ca: is required when ssl-mode is verify-identity");
}

TEST_F(ConfigTest, RequiredConnectionStrings) {
  ExpectProblem(std::string(kMinimal) + "database: {kind: postgres}\n",
                "database.postgres-url: is required when database.kind is postgres (or set "
                "EXPORT_CENTER_DATABASE_URL)");
  ExpectProblem(std::string(kMinimal) + "database: {sqlite-path: \"\"}\n",
                "database.sqlite-path: must not be empty when database.kind is sqlite");
  ExpectProblem(std::string(kMinimal) + "datasources: {ro: {kind: mysql}}\n",
                "datasources.ro.url: is required when kind is mysql (or set "
                "EXPORT_CENTER_DATASOURCE_URL_RO)");
  ExpectProblem(std::string(kMinimal) + "datasources: {ro: {sqlite-path: a.db}}\n",
                "datasources.ro.kind: is required; allowed: sqlite, postgres, mysql");
  ExpectProblem(std::string(kMinimal) + "storage: {root: \"\"}\n",
                "storage.root: must not be empty");
}

TEST_F(ConfigTest, UnknownKeys) {
  ExpectProblem(std::string(kMinimal) + "server: {prot: 8080}\n",
                "server.prot: unknown key (did you mean 'port'?); allowed: host, port, threads, "
                "public-base-url");
  ExpectProblem(
      std::string(kMinimal) + "databse: {kind: sqlite}\n",
      "databse: unknown key (did you mean 'database'?); allowed: instance-id, logging, server,");
  ExpectProblem(std::string(kMinimal) + "consumer: {lease-secs: 60}\n",
                "consumer.lease-secs: unknown key");
  ExpectProblem(std::string(kMinimal) + "zzz: 1\n", "zzz: unknown key; allowed: instance-id,");
}

TEST_F(ConfigTest, DuplicateKeys) {
  ExpectProblem(std::string(kMinimal) + "server: {port: 1}\nserver: {port: 2}\n",
                "server: duplicate key");
}

TEST_F(ConfigTest, AllProblemsReportedTogetherOnePerLine) {
  StatusOr<AppConfig> c = Parse("server: {port: 0, prot: 1}\nconsumer: {concurrency: 99}\n");
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_EQ(m.substr(0, m.find('\n')), "invalid config file test.yaml (7 problems):") << m;
  EXPECT_NE(m.find("\nserver.port: 0 is out of range"), std::string::npos) << m;
  EXPECT_NE(m.find("\nserver.prot: unknown key"), std::string::npos) << m;
  EXPECT_NE(m.find("\nconsumer.concurrency: 99 is out of range"), std::string::npos) << m;
  EXPECT_NE(m.find("\nauth.jwt-hs256-secret: "), std::string::npos) << m;
  EXPECT_NE(m.find("\nauth.download-url-secret: "), std::string::npos) << m;
  EXPECT_NE(m.find("\nauth.jwt-issuer: "), std::string::npos) << m;
  EXPECT_NE(m.find("\nauth.jwt-audience: "), std::string::npos) << m;
}

// The sample service's section is its own business: accepted, never read.
// Its checks are in tests/sdk/customer_service_config_test.cc.
TEST_F(ConfigTest, CustomerServiceSectionIsAcceptedAndSkipped) {
  StatusOr<AppConfig> c =
      Parse(std::string(kMinimal) + "customer-service: {contract-version: 0, seed-orders: -1}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
}

// The Java sample's section (examples/order-service-java reads it) names the
// sample service the demo starts; a file naming both samples is refused.
TEST_F(ConfigTest, OrderServiceSectionSelectsTheJavaSampleForTheDemo) {
  StatusOr<AppConfig> cpp = Parse(std::string(kMinimal) + "customer-service: {port: 1}\n");
  ASSERT_TRUE(cpp.ok()) << cpp.status().ToString();
  EXPECT_EQ(cpp->demo_service, "customer-service");
  StatusOr<AppConfig> java = Parse(std::string(kMinimal) + "order-service: {port: 1}\n");
  ASSERT_TRUE(java.ok()) << java.status().ToString();
  EXPECT_EQ(java->demo_service, "order-service");
  StatusOr<AppConfig> both =
      Parse(std::string(kMinimal) + "customer-service: {}\norder-service: {}\n");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("order-service: the demo starts one sample service"),
            std::string::npos)
      << both.status().message();
}

TEST_F(ConfigTest, RegistrySectionsAreKnownKeys) {
  const std::string yaml = std::string(kMinimal) + "provider-services: {}\ndefinitions: {}\n";
  StatusOr<AppConfig> c = Parse(yaml);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // They are left to the registry mapping, which reads the same document.
  StatusOr<registry::RegistrySnapshot> r = ParseRegistry(yaml, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->definitions.empty());
}

class ConfigFileTest : public ConfigTest {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("ec_config_" + std::to_string(getpid()) + ".yaml");
  }
  void TearDown() override {
    std::filesystem::remove(path_);
    ConfigTest::TearDown();
  }
  std::string path_;
};

TEST_F(ConfigFileTest, LoadsFromFile) {
  std::ofstream(path_) << kMinimal << "server: {port: 9999}\n";
  StatusOr<AppConfig> c = LoadConfig(path_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->path, path_);
  EXPECT_EQ(c->server.port, 9999);
}

TEST_F(ConfigFileTest, SyntaxErrorReportsLineAndColumn) {
  std::ofstream(path_) << "server:\n  port: 8080\n  host: [unclosed\n";
  StatusOr<AppConfig> c = LoadConfig(path_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message().rfind(path_ + ":", 0), 0u) << c.status().message();
  EXPECT_NE(c.status().message().find("YAML syntax error"), std::string::npos);
}

TEST_F(ConfigFileTest, SyntaxErrorLineNumberIsOneBased) {
  std::ofstream(path_) << "a: 1\nb: 2\nc: d: e\n";
  StatusOr<AppConfig> c = LoadConfig(path_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind(path_ + ":3:", 0), 0u) << c.status().message();
}

TEST_F(ConfigFileTest, MissingFileIsNotFound) {
  StatusOr<AppConfig> c = LoadConfig(path_ + ".missing");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
}

TEST(UpperSnake, ConvertsServiceNames) {
  EXPECT_EQ(UpperSnake("customer-service"), "CUSTOMER_SERVICE");
  EXPECT_EQ(UpperSnake("orders.replica2"), "ORDERS_REPLICA2");
}

// consumer: the tenant-fairness keys (docs/dispatch.md#tenant-fairness).
TEST_F(ConfigTest, TenantFairnessKeysAndTheDefaultLimit) {
  auto defaults = Parse(kMinimal);
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->consumer.tenant_running_limit, 0);
  EXPECT_EQ(defaults->consumer.fleet_consumer_slots, 0);
  EXPECT_EQ(defaults->consumer.tenant_handback_ms, 1000);
  // Half of this instance's 4 slots.
  EXPECT_EQ(dispatch::TenantRunningLimit(defaults->consumer), 2);

  auto fleet =
      Parse(std::string(kMinimal) + "consumer: {concurrency: 1, fleet-consumer-slots: 12}\n");
  ASSERT_TRUE(fleet.ok()) << fleet.status().ToString();
  EXPECT_EQ(dispatch::TenantRunningLimit(fleet->consumer), 6);
  auto one = Parse(std::string(kMinimal) + "consumer: {concurrency: 1}\n");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(dispatch::TenantRunningLimit(one->consumer), 1);  // at least 1
  auto set = Parse(std::string(kMinimal) +
                   "consumer: {tenant-running-limit: 3, fleet-consumer-slots: 40,"
                   " tenant-handback-ms: 250}\n");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(dispatch::TenantRunningLimit(set->consumer), 3);
  EXPECT_EQ(set->consumer.tenant_handback_ms, 250);

  ExpectProblem(std::string(kMinimal) + "consumer: {tenant-running-limit: -1}\n",
                "consumer.tenant-running-limit: -1 is out of range; allowed: [0, 100000]");
  ExpectProblem(std::string(kMinimal) + "consumer: {tenant-handback-ms: 10}\n",
                "consumer.tenant-handback-ms: 10 is out of range; allowed: [50, 600000]");
}

// ---- password-protected files (docs/configuration.md#password-protected-files-file-password)
// -----------

const char kTakesPasswords[] = R"(
definitions:
  CUSTOMER_LIST: {file-password: optional}
)";

TEST_F(ConfigTest, AFileKeyEncryptionKeyIsRequiredOnceADefinitionTakesPasswords) {
  ASSERT_TRUE(Parse(kMinimal).ok()) << "no definition takes one: not required";
  ASSERT_TRUE(Parse(std::string(kMinimal) + "definitions:\n  A: {file-password: none}\n").ok());
  ExpectProblem(std::string(kMinimal) + kTakesPasswords,
                "auth.file-key-encryption-key: is required when a definition takes a file "
                "password");
  ExpectProblem(std::string(kMinimal) +
                    "definitions:\n  A:\n    columns:\n      id_card: {required-permission: "
                    "a:b:c, require-file-password: true}\n",
                "auth.file-key-encryption-key: is required when a definition takes a file "
                "password");
  std::string yaml = std::string(kMinimal) +
                     "  file-key-encryption-key: file-key-encryption-key-0123456789abcdef\n"
                     "  file-key-encryption-previous-keys: "
                     "[previous-key-encryption-key-0123456789abcdef]\n" +
                     kTakesPasswords;
  StatusOr<AppConfig> c = Parse(yaml);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->auth.file_key_encryption_key, "file-key-encryption-key-0123456789abcdef");
  EXPECT_EQ(c->auth.file_key_encryption_previous_keys,
            std::vector<std::string>{"previous-key-encryption-key-0123456789abcdef"});
  for (const SettingSource& s : c->settings) {
    EXPECT_EQ(s.shown.find("key-encryption-key-0123"), std::string::npos) << s.key;
  }
}

TEST_F(ConfigTest, FileKeyEncryptionKeysFollowTheSecretsRule) {
  const std::string base = std::string(kMinimal) + "  file-key-encryption-key: ";
  ExpectProblem(base + std::string(31, 'k') + "\n",
                "auth.file-key-encryption-key: is too short (31 bytes)");
  ExpectProblem(base + "${EXPORT_CENTER_FILE_KEY}\n",
                "auth.file-key-encryption-key: is the unresolved placeholder");
  ExpectProblem(std::string(kMinimal) + "  file-key-encryption-previous-keys: [short]\n",
                "auth.file-key-encryption-previous-keys[0]: is too short (5 bytes)");
  StatusOr<AppConfig> bad = Parse(base + std::string(31, 'k') + "\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find(std::string(31, 'k')), std::string::npos);
}

TEST_F(ConfigTest, FileKeyEncryptionKeysComeFromTheEnvironment) {
  setenv("EXPORT_CENTER_AUTH__FILE_KEY_ENCRYPTION_KEY", "env-file-key-encryption-key-0123456789ab",
         1);
  setenv("EXPORT_CENTER_AUTH__FILE_KEY_ENCRYPTION_PREVIOUS_KEYS",
         "env-previous-key-one-0123456789abcdefgh,env-previous-key-two-0123456789abcdefgh", 1);
  StatusOr<AppConfig> c = Parse(std::string(kMinimal) + kTakesPasswords);
  unsetenv("EXPORT_CENTER_AUTH__FILE_KEY_ENCRYPTION_KEY");
  unsetenv("EXPORT_CENTER_AUTH__FILE_KEY_ENCRYPTION_PREVIOUS_KEYS");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->auth.file_key_encryption_key, "env-file-key-encryption-key-0123456789ab");
  EXPECT_EQ(c->auth.file_key_encryption_previous_keys.size(), 2u);
  int hidden = 0;
  for (const SettingSource& s : c->settings) {
    EXPECT_EQ(s.shown.find("0123456789ab"), std::string::npos) << s.key << " " << s.shown;
    if (s.key.rfind("auth.file-key-encryption", 0) == 0 && s.shown == "(hidden)") ++hidden;
  }
  EXPECT_EQ(hidden, 2);
}

}  // namespace
}  // namespace export_center::config
