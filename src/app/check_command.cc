#include "app/check_command.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "app/backends.h"
#include "attempt/export_preview.h"
#include "common/build_info.h"
#include "common/credentials.h"
#include "common/ids.h"
#include "common/json_dump.h"
#include "config/config.h"
#include "config/registry_yaml.h"
#include "http/http_client.h"
#include "http/httplib/httplib_http_client.h"
#include "identity/token_verifier.h"
#include "registry/registry.h"
#include "source/sql/datasource/read_only_datasource.h"
#include "source/sql/param_schema.h"
#include "source/sql/plan_advice.h"
#include "source/sql/sql_contract_client.h"

namespace export_center::app {
namespace {

enum class Outcome { kOk, kFail, kSkip, kWarn };

const char* Label(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kSkip:
      return "skip";
    case Outcome::kWarn:
      return "warn";
  }
  return "?";
}

// Masks every configured secret in what is printed: a backend's error may
// quote a URL or a header, and an operator pastes check output into tickets.
class Redactor {
 public:
  explicit Redactor(const config::AppConfig& c) {
    for (const std::string* s :
         {&c.auth.jwt_hs256_secret, &c.auth.download_url_secret, &c.auth.metrics_bearer_token,
          &c.storage.s3.secret_key, &c.channel.rocketmq.secret_key}) {
      Add(*s);
    }
    AddCredentialsIn(c.database.postgres.url);
    AddCredentialsIn(c.database.mysql.url);
    for (const auto& [name, ds] : c.datasources) AddCredentialsIn(ds.url);
    for (const notify::WebhookReceiver& r : c.notifications.receivers) Add(r.secret);
    Add(c.auth.file_key_encryption_key);
    for (const std::string& key : c.auth.file_key_encryption_previous_keys) Add(key);
  }
  void Add(const std::string& secret) {
    if (!secret.empty()) secrets_.insert(secret);
  }
  // A URL's or a keyword string's passwords, in whichever form it has them.
  void AddCredentialsIn(const std::string& connection) {
    for (const std::string& secret : credentials::Find(connection)) Add(secret);
  }
  std::string Apply(std::string text) const {
    for (const std::string& secret : secrets_) {
      for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3)) {
        text.replace(at, secret.size(), credentials::kMask);
      }
    }
    return credentials::Mask(text);
  }

 private:
  std::set<std::string> secrets_;
};

// One line per step: a multi-line message (a config's list of problems, a
// libpq error) is joined with "; ".
std::string OneLine(const std::string& text) {
  std::string line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(start, end - start);
    const size_t first = part.find_first_not_of(" \t\r");
    const size_t last = part.find_last_not_of(" \t\r");
    if (first != std::string::npos) {
      part = part.substr(first, last - first + 1);
      if (!line.empty()) line += line.back() == ':' ? " " : "; ";
      line += part;
    }
    start = end + 1;
  }
  return line;
}

// Prints each step as it finishes, so a slow step shows where it hangs.
class Report {
 public:
  explicit Report(bool json) : json_(json) {}
  void SetRedactor(const Redactor* redactor) { redactor_ = redactor; }

  void Add(Outcome outcome, const std::string& step, const std::string& detail) {
    const std::string shown = OneLine(redactor_ == nullptr ? detail : redactor_->Apply(detail));
    if (outcome == Outcome::kFail) failed_ = true;
    if (json_) {
      nlohmann::ordered_json line = {{"status", Label(outcome)}, {"step", step}, {"detail", shown}};
      std::cout << DumpTolerant(line) << std::endl;
    } else {
      char head[64];
      std::snprintf(head, sizeof head, "%-4s  %-10s", Label(outcome), step.c_str());
      std::cout << head << "  " << shown << std::endl;
    }
  }
  // `result` OK: ok with its line; else FAIL with the error's message.
  void Add(const std::string& step, const StatusOr<std::string>& result) {
    if (result.ok()) {
      Add(Outcome::kOk, step, *result);
    } else {
      Add(Outcome::kFail, step, result.status().message());
    }
  }
  bool failed() const { return failed_; }

 private:
  const bool json_;
  const Redactor* redactor_ = nullptr;
  bool failed_ = false;
};

std::string ShownUrl(const std::string& url) { return credentials::Mask(url); }

// The TLS settings of a MySQL connection: the mode and the file paths, never
// their contents.
std::string ShownTls(const ClientTlsOptions& tls) {
  std::string shown = std::string(" (ssl-mode ") + TlsModeName(tls.mode);
  if (!tls.ca_file.empty()) shown += ", ssl-ca " + tls.ca_file;
  if (!tls.cert_file.empty()) shown += ", ssl-cert " + tls.cert_file;
  if (!tls.key_file.empty()) shown += ", ssl-key " + tls.key_file;
  return shown + ")";
}

std::string DatabaseName(const store::DatabaseOptions& db) {
  if (db.kind == "sqlite") return "sqlite " + db.sqlite.path;
  if (db.kind == "mysql") return "mysql " + ShownUrl(db.mysql.url) + ShownTls(db.mysql.tls);
  return db.kind + " " + ShownUrl(db.postgres.url);
}

// Connects, then reads the schema version; migrates nothing.
StatusOr<std::string> CheckTaskStore(const store::DatabaseOptions& db) {
  const std::string name = DatabaseName(db);
  std::error_code ec;
  if (db.kind == "sqlite" && !std::filesystem::exists(db.sqlite.path, ec)) {
    // Opening would create an empty file: say so instead.
    return NotFound(name + ": the file does not exist; run `export-center migrate`");
  }
  auto store = OpenTaskStore(db);
  if (!store.ok()) return store.status().WithContext(name);
  if (auto now = (*store)->DatabaseNowMs(); !now.ok()) {
    return now.status().WithContext(name + ": does not answer");
  }
  auto versions = (*store)->ReadSchemaVersions();
  if (!versions.ok()) {
    return NotFound(name + ": no schema version (" + versions.status().message() +
                    "); run `export-center migrate`");
  }
  if (!versions->incompatible.empty()) return Conflict(name + ": " + versions->incompatible);
  const std::string latest = std::to_string(versions->latest);
  if (versions->current < versions->latest) {
    return Conflict(name + ": schema version " + std::to_string(versions->current) +
                    ", this binary needs " + latest + "; run `export-center migrate`");
  }
  if (Status guard = (*store)->CheckGuardRow(); !guard.ok()) return guard.WithContext(name);
  if (versions->current > versions->latest) {
    return name + ": schema version " + std::to_string(versions->current) +
           " is newer than this binary's " + latest + " (a newer release migrated it)";
  }
  return name + ": schema version " + latest + " found, this binary wants " + latest;
}

std::string DatasourceName(const source::DatasourceOptions& ds) {
  if (ds.kind == "mysql") return "mysql " + ShownUrl(ds.url) + ShownTls(ds.tls);
  return ds.kind + " " + (ds.kind == "sqlite" ? ds.sqlite_path : ShownUrl(ds.url));
}

StatusOr<std::string> CheckDatasource(const source::DatasourceOptions& ds) {
  const std::string name = DatasourceName(ds);
  auto datasource = OpenDatasource(ds);
  if (!datasource.ok()) return datasource.status().WithContext(name);
  // Query opens its connection read-only (read_only_datasource.h), as every
  // export's page does.
  auto result = (*datasource)->Query("SELECT 1", {}, "");
  if (!result.ok()) return result.status().WithContext(name + ": SELECT 1");
  return name + ": SELECT 1 answered";
}

std::string HttpClientError(const http::ClientAnswer& answer, int connect_ms, int read_ms) {
  switch (answer.error) {
    case http::ClientError::kConnection:
      return "connection refused or host unreachable";
    case http::ClientError::kConnectionTimeout:
      return "no connection within the connect timeout of " + std::to_string(connect_ms) + " ms";
    case http::ClientError::kRead:
      return "connected, but no answer within the read timeout of " + std::to_string(read_ms) +
             " ms";
    default:
      return answer.error_text;
  }
}

// Any HTTP answer proves the service is reachable; its routes need the
// internal token, which is never sent here.
StatusOr<std::string> CheckProviderService(const registry::ProviderService& service,
                                           const source::ProviderClientOptions& client_options,
                                           http::HttpClientFactory* http) {
  const std::string& base = service.base_url;
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0) {
    return InvalidArgument(base + " is not an http(s) URL");
  }
  http::HttpClientOptions options;
  options.base_url = base;
  options.connect_timeout_ms = client_options.connect_timeout_ms;
  options.read_timeout_ms = client_options.read_timeout_ms;
  options.write_timeout_ms = 5000;  // the client library's default, as before the seam
  auto client = http->NewClient(options);
  if (!client.ok()) return InvalidArgument(base + " is not a valid base URL");
  const auto start = std::chrono::steady_clock::now();
  http::ClientAnswer answer = (*client)->Send(http::ClientRequest{});
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  if (answer.outcome != http::ClientAnswer::Outcome::kRead) {
    return Unavailable(
        base + ": no HTTP answer after " + std::to_string(ms) + " ms (" +
        HttpClientError(answer, options.connect_timeout_ms, options.read_timeout_ms) + ")");
  }
  return base + ": answered HTTP " + std::to_string(answer.status) + " to GET / in " +
         std::to_string(ms) + " ms";
}

// What `serve` needs of auth/: a token verifier (ExportApi refuses to start
// without one) and, for links that work on every instance, the download-URL
// secret.
StatusOr<std::string> CheckAuth(const api::AuthOptions& auth) {
  auto verifier = identity::TokenVerifier::Create(auth, http::HttplibClientFactory());
  if (!verifier.ok()) return verifier.status();
  std::string line = "JWT";
  if ((*verifier)->hs256_enabled()) line += " HS256 (secret set)";
  if ((*verifier)->rs256_enabled())
    line += " RS256 (public key " + auth.jwt_rs256_public_key_file + ")";
  if (!auth.jwks_file.empty()) line += " JWKS file " + auth.jwks_file;
  if (!auth.jwks_url.empty()) line += " JWKS URL " + auth.jwks_url + " (fetched on first use)";
  line += auth.download_url_secret.empty()
              ? "; download-url-secret unset: download links work only on the instance that "
                "signed them, until it restarts"
              : "; download-url-secret set";
  return line;
}

// The datasources sql-template definitions name, with the definitions naming each.
std::map<std::string, std::vector<std::string>> NamedDatasources(
    const registry::RegistrySnapshot& registry) {
  std::map<std::string, std::vector<std::string>> named;
  for (const auto& [name, def] : registry.definitions) {
    if (def.source == registry::SourceKind::kSqlTemplate) named[def.datasource].push_back(name);
  }
  return named;
}

void CheckDatasources(const config::AppConfig& config, const registry::RegistrySnapshot& registry,
                      Report& report) {
  const auto named = NamedDatasources(registry);
  if (named.empty()) {
    report.Add(Outcome::kSkip, "datasource", "no sql-template definition names a datasource");
    return;
  }
  for (const auto& [name, definitions] : named) {
    auto ds = config.datasources.find(name);
    if (ds == config.datasources.end()) {
      report.Add(
          Outcome::kFail, "datasource",
          name + ": not configured under datasources (named by " + definitions.front() + ")");
      continue;
    }
    StatusOr<std::string> result = CheckDatasource(ds->second);
    report.Add("datasource", result.ok()
                                 ? StatusOr<std::string>(name + ": " + *result)
                                 : StatusOr<std::string>(result.status().WithContext(name)));
  }
}

void CheckProviderServices(const config::AppConfig& config,
                           const registry::RegistrySnapshot& registry, Report& report) {
  if (registry.services.empty()) {
    report.Add(Outcome::kSkip, "provider", "no provider service is configured");
    return;
  }
  for (const auto& [name, service] : registry.services) {
    StatusOr<std::string> result =
        CheckProviderService(service, config.provider, http::HttplibClientFactory());
    report.Add("provider", result.ok() ? StatusOr<std::string>(name + ": " + *result)
                                       : StatusOr<std::string>(result.status().WithContext(name)));
  }
}

// docs/sql-template-route.md#plan-advice, per enabled sql-template
// scenario: its first page read as a preview for `tenant` with no
// parameters — contract, render, counts, the first page and its enrich
// lookups — and the advice its plans gave, one warn line each. A scenario
// that cannot be read that way (a required parameter) is a skip: the
// advice then comes with its first export's task log.
void CheckPlanAdvice(const config::AppConfig& config, const registry::RegistrySnapshot& registry,
                     const std::string& tenant, Report& report) {
  if (tenant.empty()) return;  // asked for with --plan-tenant only
  attempt::RowSourceFactory make_source =
      MakePreviewSourceFactory(http::HttplibClientFactory(), config.provider, nullptr,
                               config.datasources, config.preview.timeout_seconds);
  bool any = false;
  for (const auto& [name, def] : registry.definitions) {
    if (def.source != registry::SourceKind::kSqlTemplate || !def.enabled) continue;
    any = true;
    task::Task t;
    t.id = NextId();
    t.tenant_id = tenant;
    t.app_code = def.app_scope;
    t.requested_by = "export-center-check";
    t.export_type = name;
    t.format = task::FileFormat::kCsv;
    t.parameters_json = "{}";
    auto table = attempt::ReadPreview(make_source, t, registry, 0);
    if (!table.ok()) {
      report.Add(Outcome::kSkip, "plan",
                 name + ": not planned, its first page failed: " + table.status().message());
      continue;
    }
    if (table->plan_advice.empty()) {
      report.Add(Outcome::kOk, "plan", name + ": no plan advice (tenant " + tenant + ")");
    }
    for (const auto& advice : table->plan_advice) {
      report.Add(Outcome::kWarn, "plan", name + ": " + source::FormatPlanAdvice(advice));
    }
  }
  if (!any) report.Add(Outcome::kSkip, "plan", "no enabled sql-template definition");
}

// What a contract call with a body that is no request tells: the SDKs (Java and
// C++) check the token first, then the route, then the body, so 400 means
// "token accepted, type or queryId served" without running any query.
StatusOr<std::string> ServedAnswer(const std::string& what, const http::ClientAnswer& answer) {
  if (answer.outcome != http::ClientAnswer::Outcome::kRead) {
    return Unavailable(what + ": no HTTP answer (" + answer.error_text + ")");
  }
  switch (answer.status) {
    case 400:
    case 413:
      return what + ": served, internal token accepted";
    case 401:
    case 403:
      return PermissionDenied(what + ": the service refused the internal token (HTTP " +
                              std::to_string(answer.status) + ")");
    case 404:
      return NotFound(what + ": not served (HTTP 404): check the service's export types and " +
                      "queryIds, and base-url's path");
    default:
      return Unavailable(what + ": unexpected HTTP " + std::to_string(answer.status));
  }
}

// docs/sql-template-route.md#declared-parameters, for a sql-template
// definition whose service answered: its contract's paramSchema against the
// definition's parameters, read with the check's own tenant. Another type is
// a failure (exports of it fail before any SQL), a name the definition lacks
// a warning, a contract that cannot be read so a warning (the scenario may
// need parameters; its first export checks it then).
void CheckDeclaredParameters(const config::AppConfig& config, const std::string& type,
                             const registry::ExportDefinition& def,
                             const registry::ProviderService& service, Report& report) {
  source::SqlContractClientOptions options;
  options.service = service;
  options.query_id = def.query_id;
  options.client = config.provider;
  options.log_context = "check exportType=" + type;
  auto client = source::NewHttpSqlContractClient(options, http::HttplibClientFactory());
  nlohmann::json params = {{"tenantId", "export-center-check"},
                           {"appCode", task::ToString(def.app_scope)},
                           {"requestedBy", "export-center-check"}};
  StatusOr<source::SqlContract> contract = client->GetSqlTemplate(params);
  if (!contract.ok()) {
    report.Add(Outcome::kWarn, "contract",
               type + ": paramSchema not read (" + contract.status().message() + ")");
    return;
  }
  auto undeclared = source::CheckParamSchema(contract->param_schema, def.parameters);
  if (!undeclared.ok()) {
    report.Add("contract", StatusOr<std::string>(undeclared.status().WithContext(type)));
    return;
  }
  for (const std::string& advice : *undeclared) {
    report.Add(Outcome::kWarn, "contract", type + ": " + advice + "; a user cannot give it");
  }
  if (undeclared->empty()) {
    report.Add(Outcome::kOk, "contract",
               type + ": paramSchema agrees with the definition's parameters");
  }
}

// Each definition's contract on its service, a "provider" line of its own: the
// batch path of a provider type, /dispatch/version of a sql-template queryId,
// asked with the token (the reachability line above sends none).
void CheckServedContracts(const config::AppConfig& config,
                          const registry::RegistrySnapshot& registry, Report& report) {
  http::HttpClientFactory* factory = http::HttplibClientFactory();
  for (const auto& [type, def] : registry.definitions) {
    const registry::ProviderService* service = registry.FindService(def.service);
    if (service == nullptr) continue;  // the registry refuses such a file
    bool provider = def.source == registry::SourceKind::kProvider;
    std::string path =
        service->base_path +
        (provider ? def.path : "/dispatch/version?queryId=" + http::EncodeQueryParam(def.query_id));
    http::HttpClientOptions options;
    options.base_url = service->base_url;
    options.connect_timeout_ms = config.provider.connect_timeout_ms;
    options.read_timeout_ms = config.provider.read_timeout_ms;
    auto client = factory->NewClient(options);
    std::string what = type + " on " + def.service + " (POST " + path + ")";
    if (!client.ok()) {
      report.Add("provider", StatusOr<std::string>(client.status().WithContext(what)));
      continue;
    }
    http::ClientRequest request;
    request.method = "POST";
    request.path = path;
    request.headers.Add("X-Internal-Service-Token", service->internal_token);
    request.content_type = "application/json";
    request.body = "[]";
    request.max_body_bytes = 64 * 1024;
    request.deadline =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(options.connect_timeout_ms + 2LL * options.read_timeout_ms);
    StatusOr<std::string> served = ServedAnswer(what, (*client)->Send(request));
    report.Add("provider", served);
    if (provider) continue;
    if (served.ok()) {
      CheckDeclaredParameters(config, type, def, *service, report);
    } else {
      report.Add(Outcome::kSkip, "contract",
                 type + ": paramSchema not read, the queryId was not served (provider step)");
    }
  }
}

// Loads the file as `serve` does: LoadConfig's validation, then the registry
// with the template writer's inspector.
StatusOr<std::string> LoadEverything(const std::string& path, config::AppConfig* config,
                                     registry::RegistrySnapshot* registry) {
  auto loaded = config::LoadConfig(path);
  if (!loaded.ok()) return loaded.status().WithContext("invalid configuration " + path);
  *config = std::move(loaded).value();
  auto snapshot = config::LoadRegistry(config->path, MakeTemplateInspector());
  if (!snapshot.ok()) return snapshot.status().WithContext("invalid registry in " + path);
  *registry = std::move(snapshot).value();
  return path + ": " + std::to_string(registry->definitions.size()) + " export type(s), " +
         std::to_string(registry->services.size()) + " provider service(s), " +
         std::to_string(config->datasources.size()) + " datasource(s)";
}

// Where each effective value came from (docs/configuration.md#environment):
// one line per setting set by the file or a variable, then how many keep
// their default. Values are the reader's (secrets "(hidden)"); the report's
// redactor masks anything else secret-looking.
void ReportSettingSources(const config::AppConfig& config, Report& report) {
  int defaults = 0;
  for (const config::SettingSource& s : config.settings) {
    if (s.origin == "default") {
      ++defaults;
      continue;
    }
    report.Add(Outcome::kOk, "setting", s.key + " = " + s.shown + " (" + s.origin + ")");
  }
  report.Add(Outcome::kOk, "setting",
             std::to_string(defaults) + " other setting(s) at their default");
}

}  // namespace

int RunCheck(const std::string& config_path, bool json, const std::string& plan_tenant) {
  // Components log through spdlog; keep stdout for the report alone.
  spdlog::set_default_logger(spdlog::stderr_color_mt("check"));
  spdlog::set_level(spdlog::level::warn);
  Report report(json);
  // First, so a pasted report says which build it came from.
  report.Add(Outcome::kOk, "version", "export-center " + build_info::Describe());

  config::AppConfig config;
  registry::RegistrySnapshot registry;
  StatusOr<std::string> loaded = LoadEverything(config_path, &config, &registry);
  report.Add("config", loaded);
  if (!loaded.ok()) return 1;  // nothing else can be checked without it

  Redactor redactor(config);
  for (const auto& [name, service] : registry.services) redactor.Add(service.internal_token);
  report.SetRedactor(&redactor);

  ReportSettingSources(config, report);
  report.Add("store", CheckTaskStore(config.database));
  report.Add("storage", CheckExportStorage(config.storage));
  report.Add("channel", CheckCommandChannel(config.channel));
  CheckDatasources(config, registry, report);
  CheckProviderServices(config, registry, report);
  CheckServedContracts(config, registry, report);
  report.Add("auth", CheckAuth(config.auth));
  CheckPlanAdvice(config, registry, plan_tenant, report);
  return report.failed() ? 1 : 0;
}

}  // namespace export_center::app
