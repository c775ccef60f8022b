#include "config/config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/ascii.h"
#include "common/file_key_ring.h"
#include "config/config_internal.h"
#include "config/mail_yaml.h"
#include "config/notifications_yaml.h"
#include "config/secret_check.h"
#include "config/subscriptions_yaml.h"
#include "config/yaml_reader.h"

namespace export_center::config {
namespace {

constexpr int64_t kMaxPort = 65535;
constexpr int64_t kDay = 86400;
constexpr int64_t kMiB = 1024LL * 1024;
constexpr int64_t kGiB = 1024LL * 1024 * 1024;
// RFC 7518 §3.2: an HS256 key must be at least as long as the hash (32 bytes).
constexpr size_t kMinJwtSecretBytes = 32;
// Download URLs live minutes and are checked by this server alone; 128 bits
// of key (NIST SP 800-107 asks for at least 112) is enough for their HMAC.
constexpr size_t kMinDownloadSecretBytes = 16;
constexpr char kFileKeyEnv[] = "EXPORT_CENTER_AUTH__FILE_KEY_ENCRYPTION_KEY";

std::string DefaultInstanceId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof(host), "localhost");
  }
  return std::string(host) + ":" + std::to_string(getpid());
}

// ---- one function per section: read values and per-field ranges ----

// Reads one section (top-level or nested) with `read`, keeping defaults when absent.
template <typename T, typename Fn>
void Section(MapReader& parent, std::string_view key, T* out, Fn read) {
  MapReader section(parent.Get(key), JoinPath(parent.path(), key), parent.errors(), parent.env());
  read(section, out);
}

void ReadLogging(MapReader& r, LoggingConfig* c) {
  r.Enum("level", &c->level, {"trace", "debug", "info", "warn", "error"});
  r.Finish();
}

void ReadServer(MapReader& r, api::ServerOptions* c) {
  r.String("host", &c->host);
  r.Int("port", &c->port, 1, kMaxPort);
  r.Int("threads", &c->threads, 1, 256);
  r.String("public-base-url", &c->public_base_url);
  r.String("page-frame-ancestors", &c->page_frame_ancestors);
  r.Int("io-threads", &c->io_threads, 1, 16);
  r.Int("header-timeout-seconds", &c->header_timeout_seconds, 1, 300);
  r.Int("body-timeout-seconds", &c->body_timeout_seconds, 1, 3600);
  r.Int("keep-alive-timeout-seconds", &c->keep_alive_timeout_seconds, 1, 3600);
  r.Int("send-timeout-seconds", &c->send_timeout_seconds, 1, 3600);
  r.Int("max-connections", &c->max_connections, 1, 1000000);
  r.Int("max-connections-per-address", &c->max_connections_per_address, 1, 1000000);
  r.Int("events-max-streams", &c->events_max_streams, 1, 1000000);
  r.Int("events-max-streams-per-user", &c->events_max_streams_per_user, 1, 1000);
  r.Int("events-poll-interval-ms", &c->events_poll_interval_ms, 100, 60000);
  r.Int("events-ticket-ttl-seconds", &c->events_ticket_ttl_seconds, 1, 30);
  r.Int("events-tickets-per-user", &c->events_tickets_per_user, 1, 10000);
  r.Int("events-tickets-max-redeemed", &c->events_tickets_max_redeemed, 1, 1000000);
  r.Finish();
}

// ssl-mode, ssl-ca, ssl-cert, ssl-key of a MySQL connection (database. and
// datasources.<name>.), checked together: they mean something for kind
// mysql only, a verify mode needs the CA, a client certificate needs its key.
void ReadMysqlTls(MapReader& r, const std::string& kind, ClientTlsOptions* tls) {
  static const std::vector<std::string> kModes = {"disabled", "preferred", "required", "verify-ca",
                                                  "verify-identity"};
  std::string mode = TlsModeName(tls->mode);
  // `|`, not `||`: every key is read (an unread key would be reported unknown).
  const bool any = r.Enum("ssl-mode", &mode, kModes) | r.String("ssl-ca", &tls->ca_file) |
                   r.String("ssl-cert", &tls->cert_file) | r.String("ssl-key", &tls->key_file);
  tls->mode = TlsModeFromName(mode).value_or(TlsMode::kPreferred);
  ErrorList* errors = r.errors();
  const std::string at = r.path().empty() ? "" : r.path() + ".";
  if (any && kind != "mysql") {
    errors->Add(at + "ssl-mode", "applies to kind mysql only (kind is " + kind + ")",
                "a postgres URL takes ?sslmode=… itself");
    return;
  }
  const bool verify = tls->mode == TlsMode::kVerifyCa || tls->mode == TlsMode::kVerifyIdentity;
  if (verify && tls->ca_file.empty()) {
    errors->Add(at + "ssl-ca", std::string("is required when ssl-mode is ") + mode,
                "the PEM file of the CA that signed the server's certificate");
  }
  if (tls->cert_file.empty() != tls->key_file.empty()) {
    errors->Add(at + (tls->cert_file.empty() ? "ssl-cert" : "ssl-key"),
                "ssl-cert and ssl-key go together", "both PEM files, or neither");
  }
  if (tls->mode == TlsMode::kDisabled &&
      !(tls->ca_file.empty() && tls->cert_file.empty() && tls->key_file.empty())) {
    errors->Add(at + "ssl-mode", "is disabled, but TLS files are set",
                "preferred, required, verify-ca, verify-identity; or drop the files");
  }
}

void ReadDatabase(MapReader& r, store::DatabaseOptions* c) {
  r.Enum("kind", &c->kind, {"sqlite", "postgres", "mysql"});
  r.String("sqlite-path", &c->sqlite.path);
  r.String("postgres-url", &c->postgres.url);
  r.String("mysql-url", &c->mysql.url);
  r.Int("pool-size", &c->pool_size, 1, 256);
  r.Int("connect-timeout-ms", &c->connect_timeout_ms, 100, 60000);
  r.Int("statement-timeout-ms", &c->statement_timeout_ms, 1000, 3600000);
  ReadMysqlTls(r, c->kind, &c->mysql.tls);
  r.Finish();
}

void ReadS3Storage(MapReader& r, storage::S3StorageOptions* c) {
  r.String("endpoint", &c->endpoint);
  r.String("presign-endpoint", &c->presign_endpoint);
  r.String("region", &c->region);
  r.String("bucket", &c->bucket);
  r.String("access-key", &c->access_key);
  r.String("secret-key", &c->secret_key);
  r.Bool("path-style", &c->path_style);
  // S3 refuses parts under 5 MiB (but the last); 10 000 parts of the maximum
  // cover any max-file-bytes.
  r.Int64("part-size-bytes", &c->part_size_bytes, 5 * kMiB, 1024 * kMiB);
  r.Int("upload-queue-parts", &c->upload_queue_parts, 1, 16);
  r.Enum("download", &c->download, {"stream", "presigned"});
  r.Int("presign-ttl-seconds", &c->presign_ttl_seconds, 1, 7 * kDay);
  r.Int("connect-timeout-ms", &c->connect_timeout_ms, 100, 60000);
  r.Int("io-timeout-ms", &c->io_timeout_ms, 1000, 600000);
  r.String("ca-cert-file", &c->ca_cert_file);
  r.Finish();
}

void ReadStorage(MapReader& r, storage::StorageOptions* c) {
  r.Enum("kind", &c->kind, {"local", "s3"});
  r.String("root", &c->root);
  MapReader s3(r.Get("s3"), JoinPath(r.path(), "s3"), r.errors(), r.env());
  ReadS3Storage(s3, &c->s3);
  r.Finish();
}

void ReadClaimMapping(MapReader& r, api::AuthOptions* c) {
  r.String("user", &c->claim_user);
  r.String("tenant", &c->claim_tenant);
  r.String("app", &c->claim_app);
  r.Enum("app-default", &c->app_code_default, {"", "PLATFORM", "MERCHANT"});
  r.StringList("permissions", &c->claim_permissions);
  r.String("permission-prefix", &c->permission_prefix);
  r.Finish();
}

void ReadAuth(MapReader& r, api::AuthOptions* c) {
  r.String("jwt-hs256-secret", &c->jwt_hs256_secret);
  r.String("jwt-rs256-public-key-file", &c->jwt_rs256_public_key_file);
  r.String("jwt-rs256-private-key-file", &c->jwt_rs256_private_key_file);
  r.String("jwt-issuer", &c->jwt_issuer);
  r.String("jwt-audience", &c->jwt_audience);
  r.Int("jwt-leeway-seconds", &c->jwt_leeway_seconds, 0, 300);
  r.String("jwks-url", &c->jwks_url);
  r.String("jwks-file", &c->jwks_file);
  r.Int("jwks-refresh-min-interval-seconds", &c->jwks_refresh_min_interval_seconds, 1, 3600);
  r.Int("jwks-max-age-seconds", &c->jwks_max_age_seconds, 60, kDay);
  r.Int("jwks-fetch-timeout-ms", &c->jwks_fetch_timeout_ms, 100, 30000);
  r.Int64("jwks-max-bytes", &c->jwks_max_bytes, 1024, 4 * 1024 * 1024);
  r.String("jwks-ca-cert-file", &c->jwks_ca_cert_file);
  MapReader claims(r.Get("claims"), JoinPath(r.path(), "claims"), r.errors(), r.env());
  ReadClaimMapping(claims, c);
  r.String("download-url-secret", &c->download_url_secret);
  r.Int("download-url-ttl-seconds", &c->download_url_ttl_seconds, 10, kDay);
  r.String("metrics-bearer-token", &c->metrics_bearer_token);
  r.String("file-key-encryption-key", &c->file_key_encryption_key);
  r.StringList("file-key-encryption-previous-keys", &c->file_key_encryption_previous_keys);
  r.Finish();
}

void ReadLimits(MapReader& r, task::LimitsOptions* c) {
  r.Int("dedupe-window-seconds", &c->dedupe_window_seconds, 0, 3600);
  r.Int("max-active-per-user", &c->max_active_per_user, 1, 100);
  r.Int("max-active-per-type", &c->max_active_per_type, 1, 1000);
  r.Int64("max-file-bytes", &c->max_file_bytes, 1024, 10 * kGiB);
  r.Int("retention-days", &c->retention_days, 1, 365);
  r.Int("max-body-bytes", &c->max_body_bytes, 1024, 16 * 1024 * 1024);
  r.Int("max-parameter-keys", &c->max_parameter_keys, 1, 100);
  r.Int("max-parameter-json-bytes", &c->max_parameter_json_bytes, 256, 65536);
  r.Int("max-parameter-string-chars", &c->max_parameter_string_chars, 1, 4096);
  r.Int("download-audit-window-seconds", &c->download_audit_window_seconds, 0, kDay);
  r.Finish();
}

void ReadPreview(MapReader& r, task::PreviewOptions* c) {
  r.Int("timeout-seconds", &c->timeout_seconds, 1, 60);
  r.Int("rows", &c->rows, 1, 100);
  r.Int("per-user-per-minute", &c->per_user_per_minute, 1, 1000);
  r.Int("max-running", &c->max_running, 1, 256);
  r.Finish();
}

void ReadConsumer(MapReader& r, dispatch::ConsumerOptions* c) {
  r.Bool("enabled", &c->enabled);
  r.Int("concurrency", &c->concurrency, 1, 64);
  r.Int("lease-seconds", &c->lease_seconds, 10, 3600);
  r.Int("heartbeat-seconds", &c->heartbeat_seconds, 1, 3600);
  r.Int("max-duration-seconds", &c->max_duration_seconds, 60, kDay);
  r.IntList("retry-backoff-seconds", &c->retry_backoff_seconds, 1, kDay);
  r.Int("shutdown-grace-seconds", &c->shutdown_grace_seconds, 0, 3600);
  r.Int("tenant-running-limit", &c->tenant_running_limit, 0, 100000);
  r.Int("fleet-consumer-slots", &c->fleet_consumer_slots, 0, 100000);
  r.Int("tenant-handback-ms", &c->tenant_handback_ms, 50, 600000);
  r.Finish();
}

void ReadPublisher(MapReader& r, dispatch::PublisherOptions* c) {
  r.Bool("enabled", &c->enabled);
  r.Int("poll-interval-ms", &c->poll_interval_ms, 100, 600000);
  r.Int("batch-size", &c->batch_size, 1, 1000);
  r.Int("lease-seconds", &c->lease_seconds, 5, 3600);
  r.IntList("backoff-seconds", &c->backoff_seconds, 1, kDay);
  r.Finish();
}

void ReadReconciler(MapReader& r, dispatch::ReconcilerOptions* c) {
  r.Bool("enabled", &c->enabled);
  r.Int("interval-seconds", &c->interval_seconds, 1, 3600);
  r.Int("redispatch-grace-seconds", &c->redispatch_grace_seconds, 1, kDay);
  r.Int("sent-stale-seconds", &c->sent_stale_seconds, 1, kDay);
  r.Int("orphan-grace-seconds", &c->orphan_grace_seconds, 60, 30 * kDay);
  r.Int("sent-retention-seconds", &c->sent_retention_seconds, 3600, 365 * kDay);
  r.Finish();
}

// retention: how long the history of ended tasks is kept (reconciler's sweep).
void ReadRetention(MapReader& r, dispatch::ReconcilerOptions* c) {
  r.Int("task-history-days", &c->task_history_days, 0, 100 * 365);
  r.Finish();
}

// Only channels that exist are accepted: a kind app/ cannot build must fail
// the config check, not start-up.
const std::vector<std::string>& BuiltChannels() {
  static const std::vector<std::string> kinds = {"embedded",
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
                                                 "rocketmq"
#endif
  };
  return kinds;
}

void ReadRocketMq(MapReader& r, dispatch::RocketMqChannelOptions* c) {
  r.String("namesrv-addr", &c->namesrv_addr);
  // Present but null ("topic-prefix:") is not an explicit choice either:
  // CheckChannel asks for "" then.
  std::string prefix;
  if (r.String("topic-prefix", &prefix)) c->topic_prefix = prefix;
  r.Int("send-timeout-ms", &c->send_timeout_ms, 100, 60000);
  r.Int("consume-timeout-ms", &c->consume_timeout_ms, 100, 60000);
  r.String("access-key", &c->access_key);
  r.String("secret-key", &c->secret_key);
  r.Int("undecodable-max-pulls", &c->undecodable_max_pulls, 1, 100);
  r.Finish();
}

void ReadChannel(MapReader& r, dispatch::ChannelOptions* c) {
  r.Enum("kind", &c->kind, BuiltChannels());
  r.Int("delivery-limit", &c->delivery_limit, 1, 100);
  Section(r, "rocketmq", &c->rocketmq, ReadRocketMq);
  r.Finish();
}

void ReadProvider(MapReader& r, source::ProviderClientOptions* c) {
  r.Int("connect-timeout-ms", &c->connect_timeout_ms, 100, 60000);
  r.Int("read-timeout-ms", &c->read_timeout_ms, 100, 600000);
  r.Int64("max-response-bytes", &c->max_response_bytes, 1024, 64LL * 1024 * 1024);
  r.Finish();
}

void ReadRender(MapReader& r, render::RenderOptions* c) {
  r.Int("deflate-level", &c->deflate_level, 1, 9);
  r.Finish();
}

void ReadDatasources(MapReader& r, std::map<std::string, source::DatasourceOptions>* out) {
  static const std::regex kName("^[A-Za-z][A-Za-z0-9_-]{0,63}$");
  for (const auto& [name, node] : r.entries()) {
    std::string path = JoinPath(r.path(), name);
    if (!std::regex_match(name, kName)) {
      r.errors()->Add(path, "invalid datasource name", "^[A-Za-z][A-Za-z0-9_-]{0,63}$");
    }
    MapReader entry(node, path, r.errors(), r.env());
    source::DatasourceOptions ds;
    ds.name = name;
    entry.Enum("kind", &ds.kind, {"sqlite", "postgres", "mysql"});
    entry.String("sqlite-path", &ds.sqlite_path);
    entry.String("url", &ds.url);
    entry.Int("connect-timeout-ms", &ds.connect_timeout_ms, 100, 60000);
    entry.Int("statement-timeout-ms", &ds.statement_timeout_ms, 100, 86400000);
    ReadMysqlTls(entry, ds.kind, &ds.tls);
    entry.Finish();
    (*out)[name] = std::move(ds);
  }
}

// ---- the environment (docs/configuration.md#environment) ----

// The names secrets and addresses had before the rule; they keep working.
// EXPORT_CENTER_DATABASE_URL is the URL of the server database.kind names.
std::vector<EnvOverlay::Alias> EnvAliases() {
  return {
      {"database.postgres-url",
       "EXPORT_CENTER_DATABASE_URL",
       "database.kind",
       {"sqlite", "postgres"}},
      {"database.mysql-url", "EXPORT_CENTER_DATABASE_URL", "database.kind", {"mysql"}},
      {"auth.jwt-hs256-secret", "EXPORT_CENTER_JWT_SECRET"},
      {"auth.download-url-secret", "EXPORT_CENTER_DOWNLOAD_URL_SECRET"},
      {"auth.metrics-bearer-token", "EXPORT_CENTER_METRICS_TOKEN"},
      {"channel.rocketmq.namesrv-addr", "EXPORT_CENTER_ROCKETMQ_NAMESRV"},
      {"channel.rocketmq.access-key", "EXPORT_CENTER_ROCKETMQ_ACCESS_KEY"},
      {"channel.rocketmq.secret-key", "EXPORT_CENTER_ROCKETMQ_SECRET_KEY"},
      {"storage.s3.access-key", "EXPORT_CENTER_S3_ACCESS_KEY"},
      {"storage.s3.secret-key", "EXPORT_CENTER_S3_SECRET_KEY"},
      {"datasources.*.url", "EXPORT_CENTER_DATASOURCE_URL_*"},
      {"notifications.receivers.*.secret", "EXPORT_CENTER_WEBHOOK_SECRET_*"},
      {"mail.password", "EXPORT_CENTER_MAIL_PASSWORD"},
  };
}

// EXPORT_CENTER_ variables that are not settings of this process: the
// failpoints, the Java SDK's, and the build and test scripts'. Any other that
// names no key stops the start (a typo must not pass silently).
std::set<std::string> NotSettings() {
  return {"EXPORT_CENTER_FAILPOINTS",        "EXPORT_CENTER_INTERNAL_TOKEN",
          "EXPORT_CENTER_SNAPSHOT_SECRET",   "EXPORT_CENTER_BIN",
          "EXPORT_CENTER_DEPS_DIR",          "EXPORT_CENTER_BUILD_JOBS",
          "EXPORT_CENTER_BUILD_TESTS",       "EXPORT_CENTER_BUILD_BENCH",
          "EXPORT_CENTER_TEST_JOBS",         "EXPORT_CENTER_FUZZ",
          "EXPORT_CENTER_FUZZ_SECONDS",      "EXPORT_CENTER_BENCH_DIR",
          "EXPORT_CENTER_PG_SERVER_OPTIONS", "EXPORT_CENTER_MARIADB_SERVER_OPTIONS",
          "EXPORT_CENTER_S3_ENDPOINT",       "EXPORT_CENTER_S3_BUCKET",
          "EXPORT_CENTER_S3_REGION"};
}

// The registry sections are read by registry_yaml.cc from the file alone; a
// provider service's token has its variable there. Its names are not unknown.
void MarkRegistryVariables(MapReader& top, EnvOverlay* env) {
  const YAML::Node services = top.Get("provider-services");
  if (!services.IsMap()) return;
  for (auto it = services.begin(); it != services.end(); ++it) {
    if (it->first.IsScalar()) {
      env->MarkKnown("EXPORT_CENTER_PROVIDER_TOKEN_" + UpperSnake(it->first.Scalar()));
    }
  }
}

// ---- cross-field and required-value checks, after env overrides ----

bool IsHttpUrl(const std::string& url) {
  static const std::regex kUrl(R"(^https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?(/[^?#\s]*)?$)");
  return std::regex_match(url, kUrl);
}

// CSP source expressions separated by spaces ('self', 'none', a scheme such
// as https:, or a host source with optional scheme, '*.' and port). Nothing
// else: a ';' or ',' would add directives or policies to the page's header.
void CheckFrameAncestors(const std::string& value, ErrorList* errors) {
  // 'self' | 'none' | scheme: | [scheme://][*.]host[:port|:*]
  static const std::regex kSource(
      R"('self'|'none'|[a-z][a-z0-9+.-]*:|([a-z][a-z0-9+.-]*://)?(\*\.)?[A-Za-z0-9.-]+(:[0-9]{1,5}|:\*)?)");
  std::istringstream words(value);
  int count = 0;
  bool ok = true;
  for (std::string word; words >> word; ++count) ok = ok && std::regex_match(word, kSource);
  if (!ok || count == 0) {
    errors->Add("server.page-frame-ancestors", Quote(value) + " is not a list of CSP sources",
                "'self', 'none' or origins such as https://shell.example.com, space-separated");
  }
}

void CheckServer(AppConfig* c, ErrorList* errors) {
  if (c->server.host.empty())
    errors->Add("server.host", "must not be empty", "an IP address or host name");
  if (c->server.public_base_url.empty()) {
    // A wildcard bind address is not somewhere a browser can go.
    std::string host = c->server.host;
    if (host == "0.0.0.0" || host == "::" || host.empty()) host = "127.0.0.1";
    c->server.public_base_url = "http://" + host + ":" + std::to_string(c->server.port);
  } else if (!IsHttpUrl(c->server.public_base_url)) {
    errors->Add("server.public-base-url", Quote(c->server.public_base_url) + " is not a URL",
                "http(s)://host[:port][/path] without query");
  }
  while (c->server.public_base_url.size() > 1 && c->server.public_base_url.back() == '/') {
    c->server.public_base_url.pop_back();
  }
  CheckFrameAncestors(c->server.page_frame_ancestors, errors);
  if (c->server.max_connections_per_address > c->server.max_connections) {
    errors->Add("server.max-connections-per-address",
                std::to_string(c->server.max_connections_per_address) +
                    " must not exceed server.max-connections (" +
                    std::to_string(c->server.max_connections) + ")",
                "1 .. max-connections");
  }
}

// The shape only; the store's own parser (store/mysql) has the last word at
// start-up. The URL is never echoed: it may hold a password.
void CheckMysqlUrl(const std::string& url, ErrorList* errors) {
  static const std::regex kMysqlUrl(R"(^(mysql|mariadb)://(.*@)?[^/?@]+/[^/?]+$)");
  const std::string expected = "mysql://user:password@host:port/database";
  if (url.empty()) {
    errors->Add("database.mysql-url",
                "is required when database.kind is mysql (or set EXPORT_CENTER_DATABASE_URL)",
                expected);
  } else if (!std::regex_match(url, kMysqlUrl)) {
    errors->Add("database.mysql-url",
                "is not a MySQL URL with a host and a database (value not shown: it may hold a "
                "password; percent-encode / ? @ in the password)",
                expected);
  }
}

void CheckS3Storage(const storage::S3StorageOptions& s3, ErrorList* errors) {
  static const std::regex kEndpoint(R"(^https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?/?$)");
  static const std::regex kBucket(R"(^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$)");
  if (!std::regex_match(s3.endpoint, kEndpoint)) {
    errors->Add("storage.s3.endpoint",
                s3.endpoint.empty() ? "is required when storage.kind is s3"
                                    : Quote(s3.endpoint) + " is not an endpoint URL",
                "http(s)://host[:port] without a path");
  }
  // Optional: presigned URLs use the endpoint when it is unset.
  if (!s3.presign_endpoint.empty() && !std::regex_match(s3.presign_endpoint, kEndpoint)) {
    errors->Add("storage.s3.presign-endpoint",
                Quote(s3.presign_endpoint) + " is not an endpoint URL",
                "http(s)://host[:port] without a path, as browsers reach the store");
  }
  if (!std::regex_match(s3.bucket, kBucket)) {
    errors->Add("storage.s3.bucket",
                s3.bucket.empty() ? "is required when storage.kind is s3"
                                  : Quote(s3.bucket) + " is not a bucket name",
                "3..63 characters of a-z 0-9 . -");
  }
  if (s3.region.empty()) errors->Add("storage.s3.region", "must not be empty", "e.g. us-east-1");
  if (s3.access_key.empty()) {
    errors->Add("storage.s3.access-key",
                "is required when storage.kind is s3 (or set EXPORT_CENTER_S3_ACCESS_KEY)",
                "the store's access key id");
  }
  if (s3.secret_key.empty()) {
    errors->Add("storage.s3.secret-key",
                "is required when storage.kind is s3 (or set EXPORT_CENTER_S3_SECRET_KEY)",
                "the store's secret access key");
  }
  CheckOptionalSecret(s3.secret_key, 0, "storage.s3.secret-key", "EXPORT_CENTER_S3_SECRET_KEY",
                      errors);
  if (!s3.ca_cert_file.empty() && !std::ifstream(s3.ca_cert_file).good()) {
    errors->Add("storage.s3.ca-cert-file", Quote(s3.ca_cert_file) + " cannot be read",
                "a PEM file of the CA certificates that sign the store's certificate");
  }
}

void CheckStores(const AppConfig& c, ErrorList* errors) {
  if (c.database.kind == "sqlite" && c.database.sqlite.path.empty()) {
    errors->Add("database.sqlite-path", "must not be empty when database.kind is sqlite",
                "a file path");
  }
  if (c.database.kind == "postgres" && c.database.postgres.url.empty()) {
    errors->Add("database.postgres-url",
                "is required when database.kind is postgres (or set EXPORT_CENTER_DATABASE_URL)",
                "postgresql://user:password@host:port/database");
  }
  if (c.database.kind == "mysql") CheckMysqlUrl(c.database.mysql.url, errors);
  if (c.storage.kind == "local" && c.storage.root.empty()) {
    errors->Add("storage.root", "must not be empty", "a directory path");
  }
  if (c.storage.kind == "s3") CheckS3Storage(c.storage.s3, errors);
  for (const auto& [name, ds] : c.datasources) {
    std::string path = "datasources." + name;
    if (ds.kind.empty()) errors->Add(path + ".kind", "is required", "sqlite, postgres, mysql");
    if (ds.kind == "sqlite" && ds.sqlite_path.empty()) {
      errors->Add(path + ".sqlite-path", "is required when kind is sqlite", "a file path");
    }
    if ((ds.kind == "postgres" || ds.kind == "mysql") && ds.url.empty()) {
      errors->Add(path + ".url",
                  "is required when kind is " + ds.kind + " (or set EXPORT_CENTER_DATASOURCE_URL_" +
                      UpperSnake(name) + ")",
                  ds.kind + "://user:password@host:port/database");
    }
  }
}

bool IsLoopbackHost(const std::string& host);

// The JWKS sources: a readable file, an http(s) URL (https unless loopback:
// the keys decide who is authenticated).
void CheckJwks(const api::AuthOptions& a, ErrorList* errors) {
  if (!a.jwks_file.empty() && !std::ifstream(a.jwks_file)) {
    errors->Add("auth.jwks-file", Quote(a.jwks_file) + " cannot be read", "a readable JWKS file");
  }
  if (a.jwks_url.empty()) return;
  static const std::regex kHttpHost(R"(^http://(\[[^\]]*\]|[^:/?#\[]*)(:[0-9]+)?(/.*)?$)");
  std::smatch http;
  const bool https = a.jwks_url.rfind("https://", 0) == 0;
  const bool http_loopback =
      std::regex_match(a.jwks_url, http, kHttpHost) && IsLoopbackHost(http[1].str());
  if (!https && !http_loopback) {
    errors->Add("auth.jwks-url", Quote(a.jwks_url) + " is not an https:// URL",
                "the identity provider's JWKS URL, e.g. "
                "https://sso.example.com/realms/main/protocol/openid-connect/certs "
                "(http:// only on a loopback host)");
  }
}

void CheckAuth(const api::AuthOptions& a, ErrorList* errors) {
  CheckJwks(a, errors);
  for (const auto& [key, path] : {std::pair{"auth.claims.user", &a.claim_user},
                                  std::pair{"auth.claims.tenant", &a.claim_tenant},
                                  std::pair{"auth.claims.app", &a.claim_app}}) {
    if (path->empty()) errors->Add(key, "must name a claim", "a claim path, e.g. sub");
  }
  if (a.jwt_hs256_secret.empty() && a.jwt_rs256_public_key_file.empty() && a.jwks_file.empty() &&
      a.jwks_url.empty()) {
    errors->Add("auth.jwt-hs256-secret",
                "one of auth.jwks-url, auth.jwks-file, auth.jwt-rs256-public-key-file and "
                "auth.jwt-hs256-secret (or EXPORT_CENTER_JWT_SECRET) is required",
                "the identity provider's JWKS URL, a JWKS or PEM public key file, or (for "
                "development) a random string of at least 32 bytes");
  } else if (!a.jwt_hs256_secret.empty()) {
    CheckSecret(a.jwt_hs256_secret, kMinJwtSecretBytes, "auth.jwt-hs256-secret",
                "EXPORT_CENTER_JWT_SECRET", errors);
  }
  if (!a.jwt_rs256_public_key_file.empty() && !std::ifstream(a.jwt_rs256_public_key_file)) {
    errors->Add("auth.jwt-rs256-public-key-file",
                Quote(a.jwt_rs256_public_key_file) + " cannot be read", "a readable PEM file");
  }
  // Without them any token the same key signed is accepted, also one minted
  // for another service. Required in every file, the demo's included
  // (docs/configuration.md#auth), so no configuration runs without the check.
  if (a.jwt_issuer.empty()) {
    errors->Add("auth.jwt-issuer", "is required: the iss claim every accepted token carries",
                "the token issuer's identifier, e.g. https://sso.example.com");
  }
  if (a.jwt_audience.empty()) {
    errors->Add("auth.jwt-audience",
                "is required: the aud value (or one of them) every accepted token carries",
                "this service's name at the issuer, e.g. export-center");
  }
  CheckSecret(a.download_url_secret, kMinDownloadSecretBytes, "auth.download-url-secret",
              "EXPORT_CENTER_DOWNLOAD_URL_SECRET", errors);
  CheckOptionalSecret(a.metrics_bearer_token, kMinTokenBytes, "auth.metrics-bearer-token",
                      "EXPORT_CENTER_METRICS_TOKEN", errors);
  CheckOptionalSecret(a.file_key_encryption_key, kMinFileKeyEncryptionKeyBytes,
                      "auth.file-key-encryption-key", kFileKeyEnv, errors);
  for (size_t i = 0; i < a.file_key_encryption_previous_keys.size(); ++i) {
    CheckSecret(a.file_key_encryption_previous_keys[i], kMinFileKeyEncryptionKeyBytes,
                "auth.file-key-encryption-previous-keys[" + std::to_string(i) + "]",
                "EXPORT_CENTER_AUTH__FILE_KEY_ENCRYPTION_PREVIOUS_KEYS", errors);
  }
}

// Whether a definition of the file takes a file password (file-password
// optional or required, or a column rule's require-file-password): read from
// the YAML itself, since the registry sections are mapped apart
// (registry_yaml.h) and this rule must hold at start-up and at every reload.
bool TakesFilePasswords(const YAML::Node& root) {
  // A missing key of a const node is an invalid node, which throws on any
  // question but IsDefined: a null node stands in for it.
  auto child = [](const YAML::Node& node, const char* key) {
    if (!node.IsMap()) return YAML::Node();
    const YAML::Node value = node[key];
    return value.IsDefined() ? value : YAML::Node();
  };
  auto scalar = [&child](const YAML::Node& node, const char* key) {
    const YAML::Node value = child(node, key);
    return value.IsScalar() ? value.Scalar() : std::string();
  };
  const YAML::Node definitions = child(root, "definitions");
  if (!definitions.IsMap()) return false;
  for (auto def = definitions.begin(); def != definitions.end(); ++def) {
    const std::string rule = scalar(def->second, "file-password");
    if (rule == "optional" || rule == "required") return true;
    const YAML::Node columns = child(def->second, "columns");
    if (!columns.IsMap()) continue;
    for (auto column = columns.begin(); column != columns.end(); ++column) {
      if (scalar(column->second, "require-file-password") == "true") return true;
    }
  }
  return false;
}

// The secrets rule for the key-encryption key: a file that lets requesters
// protect files with a password does not start without it, since the wrapped
// key material of their tasks could not be written.
void CheckFileKeyNeeded(const YAML::Node& root, const api::AuthOptions& a, ErrorList* errors) {
  if (!a.file_key_encryption_key.empty() || !TakesFilePasswords(root)) return;
  errors->Add("auth.file-key-encryption-key",
              "is required when a definition takes a file password (file-password optional "
              "or required, or require-file-password on a column) (or set " +
                  std::string(kFileKeyEnv) + ")",
              "a random string of at least " + std::to_string(kMinFileKeyEncryptionKeyBytes) +
                  " bytes, e.g. openssl rand -base64 48");
}

// A loopback listener: reachable from this machine only (127.0.0.0/8, ::1,
// localhost). Any other host, a name included, may be reached from outside.
bool IsLoopbackHost(const std::string& host) {
  static const std::regex kV4Loopback(R"(^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$)");
  return host == "localhost" || host == "::1" || host == "[::1]" ||
         std::regex_match(host, kV4Loopback);
}

// GET /metrics without a token is only for a listener nobody else reaches:
// on any other it would hand the task counts, tenants' export types and
// timings to whoever asks. Refusing to start is simpler and safer than a
// second, loopback-only metrics port (docs/observability.md#metrics).
void CheckMetricsExposure(const AppConfig& c, ErrorList* errors) {
  if (!c.auth.metrics_bearer_token.empty() || IsLoopbackHost(c.server.host)) return;
  errors->Add("auth.metrics-bearer-token",
              "is required when server.host is not a loopback address (it is " +
                  Quote(c.server.host) +
                  "): /metrics would be open to anyone who reaches the port (or set "
                  "EXPORT_CENTER_METRICS_TOKEN)",
              "a random string for the scrape config's bearer token, or server.host 127.0.0.1");
}

void CheckTiming(const AppConfig& c, ErrorList* errors) {
  const dispatch::ConsumerOptions& k = c.consumer;
  // The watchdog must renew well before the lease runs out, and a lease longer
  // than the deadline would let a dead worker's task sit past its deadline.
  if (k.heartbeat_seconds >= k.lease_seconds) {
    errors->Add("consumer.heartbeat-seconds",
                std::to_string(k.heartbeat_seconds) +
                    " must be less than consumer.lease-seconds (" +
                    std::to_string(k.lease_seconds) + ")",
                "1 .. lease-seconds - 1, typically lease-seconds / 5");
  }
  if (k.lease_seconds >= k.max_duration_seconds) {
    errors->Add("consumer.lease-seconds",
                std::to_string(k.lease_seconds) +
                    " must be less than consumer.max-duration-seconds (" +
                    std::to_string(k.max_duration_seconds) + ")",
                "10 .. max-duration-seconds - 1");
  }
}

// Topic and group names are the prefix + a fixed name; the broker accepts
// [%|a-zA-Z0-9_-] and at most 127 characters (the longest name,
// "%DLQ%<prefix>export-center-dlq-handler-v1"-sized, must fit).
constexpr size_t kMaxTopicPrefix = 64;

void CheckRocketMq(const AppConfig& c, ErrorList* errors) {
  const dispatch::RocketMqChannelOptions& r = c.channel.rocketmq;
  static const std::regex kNamesrv(R"(^[A-Za-z0-9.\-]+:[0-9]{1,5}(;[A-Za-z0-9.\-]+:[0-9]{1,5})*$)");
  if (r.namesrv_addr.empty()) {
    errors->Add("channel.rocketmq.namesrv-addr",
                "is required when channel.kind is rocketmq (or set EXPORT_CENTER_ROCKETMQ_NAMESRV)",
                "host:port[;host:port...]");
  } else if (!std::regex_match(r.namesrv_addr, kNamesrv)) {
    errors->Add("channel.rocketmq.namesrv-addr",
                Quote(r.namesrv_addr) + " is not a name-server list", "host:port[;host:port...]");
  }
  static const std::regex kPrefix("^[A-Za-z0-9_-]*$");
  if (!r.topic_prefix) {
    errors->Add("channel.rocketmq.topic-prefix",
                "is required when channel.kind is rocketmq, with no default: write it even when "
                "empty (topic-prefix: \"\" in production), so that no environment lands on "
                "another's topics by accident",
                "\"\" or letters, digits, - and _ (e.g. \"test-\")");
  } else if (r.topic_prefix->size() > kMaxTopicPrefix ||
             !std::regex_match(*r.topic_prefix, kPrefix)) {
    errors->Add("channel.rocketmq.topic-prefix",
                Quote(*r.topic_prefix) + " cannot start a RocketMQ topic or group name",
                "\"\" or up to 64 letters, digits, - and _");
  }
  // Half a credential would sign nothing the broker accepts: refuse it here,
  // not as authentication failures at run time.
  if (!r.access_key.empty() && r.secret_key.empty()) {
    errors->Add("channel.rocketmq.secret-key",
                "is required when channel.rocketmq.access-key is set (or set "
                "EXPORT_CENTER_ROCKETMQ_SECRET_KEY)",
                "the RocketMQ user's password (5.x) or secretKey (4.x plain ACL)");
  }
  CheckOptionalSecret(r.secret_key, 0, "channel.rocketmq.secret-key",
                      "EXPORT_CENTER_ROCKETMQ_SECRET_KEY", errors);
  if (r.access_key.empty() && !r.secret_key.empty()) {
    errors->Add("channel.rocketmq.access-key",
                "is required when channel.rocketmq.secret-key is set (or set "
                "EXPORT_CENTER_ROCKETMQ_ACCESS_KEY)",
                "the RocketMQ user name (5.x) or accessKey (4.x plain ACL)");
  }
  // A send must end within the outbox claim that made it, or another
  // publisher could claim and send the row while the first send still runs.
  if (r.send_timeout_ms >= c.publisher.lease_seconds * 1000) {
    errors->Add("channel.rocketmq.send-timeout-ms",
                std::to_string(r.send_timeout_ms) + " must be less than publisher.lease-seconds (" +
                    std::to_string(c.publisher.lease_seconds) + " s)",
                "100 .. lease-seconds * 1000 - 1, far below it (default 3000 for a 60 s lease)");
  }
}

void Validate(AppConfig* c, ErrorList* errors) {
  if (c->instance_id.empty() || c->instance_id.size() > 128) {
    errors->Add("instance-id", "must be 1..128 characters", "any text, default hostname:pid");
  }
  CheckServer(c, errors);
  CheckStores(*c, errors);
  CheckAuth(c->auth, errors);
  CheckMetricsExposure(*c, errors);
  CheckTiming(*c, errors);
  if (c->channel.kind == "rocketmq") CheckRocketMq(*c, errors);
}

// "invalid config file x.yaml (2 problems)": the first line of the Status, so
// that every following line is exactly one "key.path: ..." problem.
std::string ProblemsHeader(const std::string& path, const ErrorList& errors) {
  size_t n = errors.lines().size();
  return "invalid config file " + (path.empty() ? std::string("(inline)") : path) + " (" +
         std::to_string(n) + (n == 1 ? " problem):\n" : " problems):\n");
}

}  // namespace

std::string UpperSnake(const std::string& name) {
  std::string out;
  for (char ch : name) {
    out += std::isalnum(static_cast<unsigned char>(ch)) ? ToUpperAscii(ch) : '_';
  }
  return out;
}

StatusOr<AppConfig> ParseConfigNode(const YAML::Node& root, const std::string& path) {
  return ParseConfigNode(root, path, EnvOverlay::ProcessVariables());
}

StatusOr<AppConfig> ParseConfigNode(const YAML::Node& root, const std::string& path,
                                    std::map<std::string, std::string> env_vars) {
  AppConfig c;
  c.path = path;
  ErrorList errors;
  EnvOverlay env(std::move(env_vars), EnvAliases(), NotSettings());
  try {
    MapReader top(root, "", &errors, &env);
    top.String("instance-id", &c.instance_id);
    Section(top, "logging", &c.logging, ReadLogging);
    Section(top, "server", &c.server, ReadServer);
    Section(top, "database", &c.database, ReadDatabase);
    Section(top, "storage", &c.storage, ReadStorage);
    Section(top, "auth", &c.auth, ReadAuth);
    Section(top, "limits", &c.limits, ReadLimits);
    Section(top, "preview", &c.preview, ReadPreview);
    Section(top, "consumer", &c.consumer, ReadConsumer);
    Section(top, "publisher", &c.publisher, ReadPublisher);
    Section(top, "reconciler", &c.reconciler, ReadReconciler);
    Section(top, "retention", &c.reconciler, ReadRetention);
    Section(top, "channel", &c.channel, ReadChannel);
    Section(top, "provider", &c.provider, ReadProvider);
    Section(top, "render", &c.render, ReadRender);
    MapReader notifications(top.Get("notifications"), "notifications", &errors, &env);
    ReadNotifications(notifications, &c.notifications);
    Section(top, "mail", &c.mail, ReadMail);
    Section(top, "subscriptions", &c.subscriptions, ReadSubscriptions);
    // The sample business service's own settings share the file so that one
    // file runs the demo; examples/customer-service (service_config.h) reads
    // and checks them, the center skips them. Named here so it is not unknown.
    bool cpp_sample = top.Get("customer-service").IsDefined();
    // Likewise the Java sample's (examples/order-service-java, ServiceSettings.java).
    bool java_sample = top.Get("order-service").IsDefined();
    if (java_sample) c.demo_service = "order-service";
    if (cpp_sample && java_sample) {
      errors.Add("order-service", "the demo starts one sample service",
                 "keep customer-service: or order-service:, not both");
    }
    Section(top, "datasources", &c.datasources, ReadDatasources);
    // Mapped by registry_yaml.cc; named here so they are not unknown.
    MarkRegistryVariables(top, &env);
    top.Get("definitions");
    top.Finish();
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": cannot read YAML: " + e.what());
  }
  if (c.instance_id.empty()) c.instance_id = DefaultInstanceId();
  env.ReportUnknown(&errors);
  c.settings = env.sources();
  for (const SettingSource& s : c.settings) {
    const bool from_env = s.origin.rfind(EnvOverlay::kPrefix, 0) == 0;
    if (from_env && std::find(c.env_overrides.begin(), c.env_overrides.end(), s.origin) ==
                        c.env_overrides.end()) {
      c.env_overrides.push_back(s.origin);
    }
  }
  Validate(&c, &errors);
  CheckNotifications(c.notifications, root, &errors);
  CheckMail(c.mail, &errors);
  CheckFileKeyNeeded(root, c.auth, &errors);
  if (!errors.empty())
    return InvalidArgument(ProblemsHeader(path, errors) + errors.ToStatus().message());
  return c;
}

StatusOr<AppConfig> ParseConfig(std::string_view yaml, const std::string& path) {
  EC_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml, path));
  return ParseConfigNode(root, path);
}

StatusOr<AppConfig> LoadConfig(const std::string& path) {
  EC_ASSIGN_OR_RETURN(YAML::Node root, LoadYamlFile(path));
  return ParseConfigNode(root, path);
}

}  // namespace export_center::config
