#include "config/registry_yaml.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"

namespace export_center::config {
namespace {

using registry::ExportDefinition;
using registry::Registry;
using registry::RegistrySnapshot;
using registry::SourceKind;

// A valid registry; each test breaks one thing with a substitution.
const char kValid[] = R"(
provider-services:
  customer-service:
    base-url: http://127.0.0.1:8081
    internal-token: token-1234567890
  order-service:
    base-url: https://orders.internal:9443
    internal-token: token-abcdef-0123456
datasources:
  orders-replica:
    kind: sqlite
    sqlite-path: var/orders.db
definitions:
  CUSTOMER_LIST:
    title: 客户列表
    source: provider
    provider-service: customer-service
    provider-path: /internal/exports/v1/CUSTOMER_LIST/batches
    required-permission: platform:customer:export
    app-scope: PLATFORM
    enabled: true
    max-rows: 200000
    max-attempts: 3
    batch-size: 500
    timezone: Asia/Shanghai
    parameters:
      - {name: keyword, type: STRING, title: 关键字}
      - {name: status, type: STRING, allowed: [ACTIVE, INACTIVE, FROZEN]}
  ORDER_SQL:
    source: sql-template
    provider-service: order-service
    query-id: order.list
    datasource: orders-replica
    consistency: lenient
    required-permission: merchant:order:export
    app-scope: MERCHANT
)";

StatusOr<RegistrySnapshot> Parse(const std::string& yaml) {
  return ParseRegistry(yaml, nullptr);  // no template files here
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// Parses `yaml`, expects failure and a message line starting with `line`.
void ExpectProblem(const std::string& yaml, const std::string& line) {
  StatusOr<RegistrySnapshot> result = Parse(yaml);
  ASSERT_FALSE(result.ok()) << "expected: " << line;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("\n" + line), std::string::npos)
      << "expected line: " << line << "\ngot:\n"
      << result.status().message();
}

TEST(Registry, ValidRegistryParses) {
  StatusOr<RegistrySnapshot> r = Parse(kValid);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ExportDefinition* def = r->Find("CUSTOMER_LIST");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->title, "客户列表");
  EXPECT_EQ(def->source, SourceKind::kProvider);
  EXPECT_EQ(def->service, "customer-service");
  EXPECT_EQ(def->batch_size, 500);
  EXPECT_EQ(def->app_scope, task::AppCode::kPlatform);
  ASSERT_EQ(def->parameters.size(), 2u);
  EXPECT_EQ(def->parameters[0].title, "关键字");
  EXPECT_EQ(def->parameters[1].title, "status");  // defaults to the name
  EXPECT_EQ(def->parameters[1].allowed.size(), 3u);
  const ExportDefinition* sql = r->Find("ORDER_SQL");
  ASSERT_NE(sql, nullptr);
  EXPECT_EQ(sql->source, SourceKind::kSqlTemplate);
  EXPECT_EQ(sql->title, "ORDER_SQL");
  EXPECT_EQ(sql->consistency, "lenient");
  EXPECT_EQ(sql->app_scope, task::AppCode::kMerchant);
  EXPECT_EQ(sql->max_rows, 200000);
  EXPECT_EQ(sql->max_attempts, 3);
  EXPECT_EQ(r->Find("NOPE"), nullptr);
  ASSERT_NE(r->FindService("order-service"), nullptr);
  EXPECT_EQ(r->FindService("order-service")->base_url, "https://orders.internal:9443");
  EXPECT_EQ(r->FindService("nope"), nullptr);
}

const char kGovernedColumns[] = R"(    columns:
      phone: {required-permission: platform:customer:contact, without: mask, keep-first: 3, keep-last: 4}
      id_card: {required-permission: platform:customer:contact, without: hash, hash-chars: 16}
      salary: {required-permission: platform:customer:salary}
    parameters:)";

TEST(Registry, GovernedColumnsParse) {
  StatusOr<RegistrySnapshot> r = Parse(Replace(kValid, "    parameters:", kGovernedColumns));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ExportDefinition* def = r->Find("CUSTOMER_LIST");
  ASSERT_EQ(def->column_rules.size(), 3u);
  const task::ColumnRule& phone = def->column_rules[0];
  EXPECT_EQ(phone.key, "phone");
  EXPECT_EQ(phone.required_permission, "platform:customer:contact");
  EXPECT_EQ(phone.without.key, "phone");
  EXPECT_EQ(phone.without.action, task::ColumnAction::kMask);
  EXPECT_EQ(phone.without.keep_first, 3);
  EXPECT_EQ(phone.without.keep_last, 4);
  EXPECT_EQ(def->column_rules[1].without.action, task::ColumnAction::kHash);
  EXPECT_EQ(def->column_rules[1].without.hash_chars, 16);
  EXPECT_EQ(def->column_rules[2].without.action, task::ColumnAction::kOmit);  // the default
  EXPECT_TRUE(r->Find("ORDER_SQL")->column_rules.empty());
}

TEST(Registry, GovernedColumnProblems) {
  auto with = [](const std::string& rule) {
    return Replace(kValid, "    parameters:", "    columns:\n      " + rule + "\n    parameters:");
  };
  ExpectProblem(with("phone: {without: mask}"),
                "definitions.CUSTOMER_LIST.columns.phone.required-permission: is required");
  ExpectProblem(with("phone: {required-permission: nope, without: omit}"),
                "definitions.CUSTOMER_LIST.columns.phone.required-permission: \"nope\" is not a "
                "valid permission");
  ExpectProblem(with("phone: {required-permission: a:b:c, without: blur}"),
                "definitions.CUSTOMER_LIST.columns.phone.without:");
  ExpectProblem(with("phone: {required-permission: a:b:c, without: hash, keep-first: 3}"),
                "definitions.CUSTOMER_LIST.columns.phone.keep-first: is only for without: mask");
  ExpectProblem(with("phone: {required-permission: a:b:c, without: mask, hash-chars: 8}"),
                "definitions.CUSTOMER_LIST.columns.phone.hash-chars: is only for without: hash");
  ExpectProblem(with("phone: {required-permission: a:b:c, without: hash, hash-chars: 4}"),
                "definitions.CUSTOMER_LIST.columns.phone.hash-chars: 4 is out of range");
  ExpectProblem(with("phone: {required-permission: a:b:c, mask: true}"),
                "definitions.CUSTOMER_LIST.columns.phone.mask: unknown key");
  ExpectProblem(with("\"a b\": {required-permission: a:b:c}"),
                "definitions.CUSTOMER_LIST.columns.a b: \"a b\" is not a valid column key");
}

// Languages and the platform's own labels (docs/configuration.md#rich-columns).
const char kRich[] = R"(    locale: zh-CN
    sheet-name: {zh-CN: 客户列表, en: Customers}
    totals-label: 合计
    columns:
      status:
        labels: {ACTIVE: {zh-CN: 正常, en: Active}, FROZEN: 冻结}
        label-missing: BLANK
      phone: {required-permission: platform:customer:contact, without: mask, labels: {"0": 无}}
    parameters:)";

TEST(Registry, LanguagesAndColumnLabelsParse) {
  StatusOr<RegistrySnapshot> r = Parse(Replace(kValid, "    parameters:", kRich));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ExportDefinition* def = r->Find("CUSTOMER_LIST");
  EXPECT_EQ(def->locale, "zh-CN");
  EXPECT_EQ(def->sheet_name.In({"en-US", def->locale}), "Customers");
  EXPECT_EQ(def->sheet_name.In({"", def->locale}), "客户列表");
  EXPECT_EQ(def->totals_label.In({"en", def->locale}), "合计");
  ASSERT_EQ(def->column_labels.size(), 2u);
  EXPECT_EQ(def->column_labels[0].key, "status");
  EXPECT_EQ(def->column_labels[0].label_missing, task::LabelMissing::kBlank);
  auto overrides = registry::LabelOverridesFor(*def, {"en", def->locale});
  ASSERT_EQ(overrides[0].labels.size(), 2u);
  EXPECT_EQ(overrides[0].labels[0], (std::pair<std::string, std::string>{"ACTIVE", "Active"}));
  EXPECT_EQ(overrides[0].labels[1], (std::pair<std::string, std::string>{"FROZEN", "冻结"}));
  // A labelled column that is also governed is both.
  ASSERT_EQ(def->column_rules.size(), 1u);
  EXPECT_EQ(def->column_rules[0].key, "phone");
  EXPECT_TRUE(r->Find("ORDER_SQL")->locale.empty());
  EXPECT_TRUE(r->Find("ORDER_SQL")->sheet_name.empty());
}

TEST(Registry, LanguageAndLabelProblemsNameTheTypeAndColumn) {
  auto with = [](const std::string& text) {
    return Replace(kValid, "    parameters:", text + "\n    parameters:");
  };
  ExpectProblem(with("    locale: zh_CN"),
                "definitions.CUSTOMER_LIST.locale: \"zh_CN\" is not a language tag");
  ExpectProblem(with("    sheet-name: {zh CN: 客户}"),
                "definitions.CUSTOMER_LIST.sheet-name.zh CN: \"zh CN\" is not a language tag");
  ExpectProblem(
      with("    sheet-name: 这是一个非常非常非常非常非常非常非常非常非常非常非常长的工作表名称"),
      "definitions.CUSTOMER_LIST.sheet-name: must be 1..31 characters");
  ExpectProblem(with("    totals-label: [a, b]"), "definitions.CUSTOMER_LIST.totals-label:");
  ExpectProblem(with("    columns:\n      status: {labels: {ACTIVE: [a]}}"),
                "definitions.CUSTOMER_LIST.columns.status.labels.ACTIVE:");
  ExpectProblem(with("    columns:\n      status: {labels: {ACTIVE: {en: [a]}}}"),
                "definitions.CUSTOMER_LIST.columns.status.labels.ACTIVE.en:");
  ExpectProblem(with("    columns:\n      status: {labels: {ACTIVE: a}, label-missing: DROP}"),
                "definitions.CUSTOMER_LIST.columns.status.label-missing:");
  ExpectProblem(with("    columns:\n      status: {labels: {}}"),
                "definitions.CUSTOMER_LIST.columns.status.labels: is an empty map");
  ExpectProblem(with("    columns:\n      status: {lables: {A: a}}"),
                "definitions.CUSTOMER_LIST.columns.status.lables: unknown key");
}

TEST(Registry, EmptyDocumentIsAnEmptyRegistry) {
  StatusOr<RegistrySnapshot> r = Parse("");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->definitions.empty());
}

TEST(Registry, ProviderServiceMustBeAllowListed) {
  ExpectProblem(Replace(kValid, "provider-service: customer-service", "provider-service: evil"),
                "definitions.CUSTOMER_LIST.provider-service: \"evil\" is not in provider-services; "
                "allowed: customer-service, order-service");
}

TEST(Registry, ProviderPathPattern) {
  ExpectProblem(Replace(kValid, "/internal/exports/v1/CUSTOMER_LIST/batches", "/internal/x"),
                "definitions.CUSTOMER_LIST.provider-path: \"/internal/x\" does not match");
}

TEST(Registry, ProviderPathTypeMustEqualKey) {
  ExpectProblem(Replace(kValid, "/v1/CUSTOMER_LIST/", "/v1/ORDER_LIST/"),
                "definitions.CUSTOMER_LIST.provider-path: the type in");
}

TEST(Registry, ProviderPathRequiredForProvider) {
  ExpectProblem(Replace(kValid, "provider-path: /internal/exports/v1/CUSTOMER_LIST/batches", ""),
                "definitions.CUSTOMER_LIST.provider-path: is required for source provider");
}

TEST(Registry, KeyPattern) {
  ExpectProblem(
      Replace(kValid, "  CUSTOMER_LIST:\n", "  customer_list:\n"),
      "definitions.customer_list: invalid export type name; allowed: ^[A-Z][A-Z0-9_]{0,63}$");
}

TEST(Registry, PermissionRequiredAndPattern) {
  ExpectProblem(Replace(kValid, "    required-permission: platform:customer:export\n", ""),
                "definitions.CUSTOMER_LIST.required-permission: is required");
  ExpectProblem(
      Replace(kValid, "platform:customer:export", "Platform:customer"),
      "definitions.CUSTOMER_LIST.required-permission: \"Platform:customer\" is not a valid");
  ExpectProblem(Replace(kValid, "platform:customer:export", "\"\""),
                "definitions.CUSTOMER_LIST.required-permission: is required");
}

TEST(Registry, AppScope) {
  ExpectProblem(Replace(kValid, "app-scope: PLATFORM", "app-scope: ADMIN"),
                "definitions.CUSTOMER_LIST.app-scope: \"ADMIN\" is not supported; allowed: "
                "PLATFORM, MERCHANT");
}

TEST(Registry, Ranges) {
  ExpectProblem(Replace(kValid, "max-rows: 200000", "max-rows: 500001"),
                "definitions.CUSTOMER_LIST.max-rows: 500001 is out of range; allowed: [1, 500000]");
  ExpectProblem(Replace(kValid, "max-rows: 200000", "max-rows: 0"),
                "definitions.CUSTOMER_LIST.max-rows: 0 is out of range");
  ExpectProblem(Replace(kValid, "batch-size: 500", "batch-size: 20"),
                "definitions.CUSTOMER_LIST.batch-size: 20 is out of range; allowed: [50, 1000]");
  ExpectProblem(Replace(kValid, "batch-size: 500", "batch-size: 1001"),
                "definitions.CUSTOMER_LIST.batch-size: 1001 is out of range");
  ExpectProblem(Replace(kValid, "max-attempts: 3", "max-attempts: 6"),
                "definitions.CUSTOMER_LIST.max-attempts: 6 is out of range; allowed: [1, 5]");
  ExpectProblem(Replace(kValid, "max-attempts: 3", "max-attempts: 0"),
                "definitions.CUSTOMER_LIST.max-attempts: 0 is out of range");
}

TEST(Registry, WrongTypes) {
  ExpectProblem(Replace(kValid, "batch-size: 500", "batch-size: lots"),
                "definitions.CUSTOMER_LIST.batch-size: \"lots\" is not an integer");
  ExpectProblem(
      Replace(kValid, "enabled: true", "enabled: yes"),
      "definitions.CUSTOMER_LIST.enabled: \"yes\" is not a boolean; allowed: true, false");
}

TEST(Registry, Timezone) {
  ExpectProblem(Replace(kValid, "timezone: Asia/Shanghai", "timezone: Mars/Olympus"),
                "definitions.CUSTOMER_LIST.timezone: \"Mars/Olympus\" is not a known time zone");
}

// `locale`: the type's default language (docs/configuration.md), a language tag.
TEST(Registry, DefaultLocale) {
  StatusOr<RegistrySnapshot> r = Parse(kValid);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->definitions.at("CUSTOMER_LIST").locale, "");
  r = Parse(
      Replace(kValid, "timezone: Asia/Shanghai", "timezone: Asia/Shanghai\n    locale: zh-CN"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->definitions.at("CUSTOMER_LIST").locale, "zh-CN");
  ExpectProblem(
      Replace(kValid, "timezone: Asia/Shanghai", "timezone: Asia/Shanghai\n    locale: zh_CN"),
      "definitions.CUSTOMER_LIST.locale: \"zh_CN\" is not a language tag");
}

TEST(Registry, SqlTemplateNeedsQueryIdAndDatasource) {
  std::string yaml = Replace(kValid, "    query-id: order.list\n", "");
  yaml = Replace(yaml, "    datasource: orders-replica\n", "");
  ExpectProblem(yaml, "definitions.ORDER_SQL.query-id: is required for source sql-template");
  ExpectProblem(yaml, "definitions.ORDER_SQL.datasource: is required for source sql-template");
}

TEST(Registry, SqlTemplateDatasourceMustBeDefined) {
  ExpectProblem(Replace(kValid, "datasource: orders-replica", "datasource: prod-primary"),
                "definitions.ORDER_SQL.datasource: \"prod-primary\" is not defined in datasources; "
                "allowed: orders-replica");
}

TEST(Registry, ConsistencyValues) {
  ExpectProblem(
      Replace(kValid, "consistency: lenient", "consistency: loose"),
      "definitions.ORDER_SQL.consistency: \"loose\" is not supported; allowed: strict, lenient");
}

TEST(Registry, ProviderOnlyAndSqlOnlyFieldsDoNotMix) {
  ExpectProblem(Replace(kValid, "    title: 客户列表\n", "    title: 客户列表\n    query-id: q1\n"),
                "definitions.CUSTOMER_LIST.query-id: is only for source sql-template");
  ExpectProblem(
      Replace(
          kValid, "    query-id: order.list\n",
          "    query-id: order.list\n    provider-path: /internal/exports/v1/ORDER_SQL/batches\n"),
      "definitions.ORDER_SQL.provider-path: is only for source provider");
}

TEST(Registry, SourceValues) {
  ExpectProblem(Replace(kValid, "source: provider", "source: http"),
                "definitions.CUSTOMER_LIST.source: \"http\" is not supported; allowed: provider, "
                "sql-template");
}

TEST(Registry, UnknownDefinitionKey) {
  ExpectProblem(Replace(kValid, "batch-size: 500", "batch-sise: 500"),
                "definitions.CUSTOMER_LIST.batch-sise: unknown key (did you mean 'batch-size'?); "
                "allowed: title,");
}

TEST(Registry, DuplicateDefinitionKey) {
  std::string yaml =
      Replace(kValid, "  ORDER_SQL:\n", "  CUSTOMER_LIST:\n    title: x\n  ORDER_SQL:\n");
  ExpectProblem(yaml, "definitions.CUSTOMER_LIST: duplicate key");
}

TEST(Registry, ParameterRules) {
  ExpectProblem(Replace(kValid, "{name: status, type: STRING", "{name: keyword, type: STRING"),
                "definitions.CUSTOMER_LIST.parameters[1].name: \"keyword\" is declared twice");
  ExpectProblem(Replace(kValid, "{name: keyword, type: STRING,", "{name: keyword, type: FLOAT,"),
                "definitions.CUSTOMER_LIST.parameters[0].type: \"FLOAT\" is not supported; "
                "allowed: STRING, INTEGER");
  ExpectProblem(
      Replace(kValid, "{name: keyword,", "{name: 1bad,"),
      "definitions.CUSTOMER_LIST.parameters[0].name: \"1bad\" is not a valid parameter name");
  ExpectProblem(Replace(kValid, "{name: keyword, type: STRING, title: 关键字}", "{type: STRING}"),
                "definitions.CUSTOMER_LIST.parameters[0].name: is required");
  ExpectProblem(Replace(kValid, "{name: keyword, type: STRING, title: 关键字}",
                        "{name: keyword, colour: red}"),
                "definitions.CUSTOMER_LIST.parameters[0].colour: unknown key");
  ExpectProblem(Replace(kValid, "allowed: [ACTIVE, INACTIVE, FROZEN]", "allowed: [ACTIVE, ACTIVE]"),
                "definitions.CUSTOMER_LIST.parameters[1].allowed: contains \"ACTIVE\" twice");
}

TEST(Registry, AtMostTwentyParameters) {
  std::string params;
  for (int i = 0; i < 21; ++i) params += "      - {name: p" + std::to_string(i) + "}\n";
  std::string yaml =
      Replace(kValid, "      - {name: keyword, type: STRING, title: 关键字}\n", params);
  ExpectProblem(
      yaml,
      "definitions.CUSTOMER_LIST.parameters: 22 parameters are too many; allowed: at most 20");
}

TEST(Registry, ServiceBaseUrlRules) {
  ExpectProblem(Replace(kValid, "http://127.0.0.1:8081", "http://127.0.0.1:8081?x=1"),
                "provider-services.customer-service.base-url: \"http://127.0.0.1:8081?x=1\" must "
                "not have a query or fragment");
  ExpectProblem(Replace(kValid, "http://127.0.0.1:8081", "http://127.0.0.1:8081/a/../admin"),
                "provider-services.customer-service.base-url: \"http://127.0.0.1:8081/a/../admin\" "
                "has a path that is not plain /segment[/segment...]");
  ExpectProblem(Replace(kValid, "http://127.0.0.1:8081", "http://127.0.0.1:8081/a%2F"),
                "provider-services.customer-service.base-url: \"http://127.0.0.1:8081/a%2F\" has a "
                "path that is not plain /segment[/segment...]");
  ExpectProblem(Replace(kValid, "http://127.0.0.1:8081", "http://user:pw@127.0.0.1:8081"),
                "provider-services.customer-service.base-url: \"http://user:***@127.0.0.1:8081\" "
                "must not contain user info");
  ExpectProblem(Replace(kValid, "http://127.0.0.1:8081", "ftp://127.0.0.1"),
                "provider-services.customer-service.base-url: \"ftp://127.0.0.1\" must start with "
                "http:// or https://");
  ExpectProblem(Replace(kValid, "http://127.0.0.1:8081", "http://127.0.0.1:99999"),
                "provider-services.customer-service.base-url: port 99999 is out of range");
}

// A service below a servlet context path: the client connects to the origin
// and prefixes every request path with base-url's path.
TEST(Registry, ServiceBaseUrlMayCarryAPath) {
  for (const char* url :
       {"http://127.0.0.1:8081/orders/export", "http://127.0.0.1:8081/orders/export/"}) {
    auto snapshot = Parse(Replace(kValid, "http://127.0.0.1:8081", url));
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    const auto& service = snapshot->services.at("customer-service");
    EXPECT_EQ(service.base_url, "http://127.0.0.1:8081");
    EXPECT_EQ(service.base_path, "/orders/export");
  }
  auto plain = Parse(kValid);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->services.at("customer-service").base_path, "");
}

TEST(Registry, ServiceNeedsToken) {
  ExpectProblem(Replace(kValid, "    internal-token: token-1234567890\n", ""),
                "provider-services.customer-service.internal-token: is required (or set "
                "EXPORT_CENTER_PROVIDER_TOKEN_CUSTOMER_SERVICE)");
}

// The provider token is a secret under the shared rule (config/secret_check.h).
TEST(Registry, ServiceTokenMustBeLongAndNoPlaceholder) {
  ExpectProblem(Replace(kValid, "internal-token: token-1234567890", "internal-token: tok"),
                "provider-services.customer-service.internal-token: is too short (3 bytes); "
                "allowed: at least 16 bytes");
  ExpectProblem(Replace(kValid, "internal-token: token-1234567890",
                        "internal-token: ${EXPORT_CENTER_INTERNAL_TOKEN}"),
                "provider-services.customer-service.internal-token: is the unresolved placeholder "
                "${EXPORT_CENTER_INTERNAL_TOKEN}: the configuration file expands no variables; set "
                "EXPORT_CENTER_PROVIDER_TOKEN_CUSTOMER_SERVICE instead");
}

TEST(Registry, ServiceTokenFromEnvironment) {
  setenv("EXPORT_CENTER_PROVIDER_TOKEN_CUSTOMER_SERVICE", "from-env-0123456789", 1);
  StatusOr<RegistrySnapshot> r =
      Parse(Replace(kValid, "    internal-token: token-1234567890\n", ""));
  unsetenv("EXPORT_CENTER_PROVIDER_TOKEN_CUSTOMER_SERVICE");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->FindService("customer-service")->internal_token, "from-env-0123456789");
}

TEST(Registry, FileNamePattern) {
  ExpectProblem(
      Replace(kValid, "    timezone: Asia/Shanghai\n",
              "    timezone: Asia/Shanghai\n    file-name-pattern: \"{taskName}_{user}\"\n"),
      "definitions.CUSTOMER_LIST.file-name-pattern: unknown placeholder {user}");
  ExpectProblem(Replace(kValid, "    timezone: Asia/Shanghai\n",
                        "    timezone: Asia/Shanghai\n    file-name-pattern: \"../{taskName}\"\n"),
                "definitions.CUSTOMER_LIST.file-name-pattern: must be 1..200 characters");
}

TEST(Registry, AllProblemsReportedTogether) {
  std::string yaml = Replace(kValid, "batch-size: 500", "batch-size: 20");
  yaml = Replace(yaml, "app-scope: PLATFORM", "app-scope: X");
  yaml = Replace(yaml, "max-attempts: 3", "max-attempts: 9");
  StatusOr<RegistrySnapshot> r = Parse(yaml);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("(3 problems)"), std::string::npos) << m;
  EXPECT_NE(m.find("batch-size"), std::string::npos);
  EXPECT_NE(m.find("app-scope"), std::string::npos);
  EXPECT_NE(m.find("max-attempts"), std::string::npos);
}

// The shipped configs must load, both as a config and as a registry.
void ExpectShippedConfigLoads(const std::string& relative) {
  std::string path = std::string(EC_SOURCE_DIR) + "/" + relative;
  StatusOr<AppConfig> app = LoadConfig(path);
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  StatusOr<RegistrySnapshot> r = LoadRegistry(path, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ExportDefinition* def = r->Find("CUSTOMER_LIST");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->title, "客户列表");
  EXPECT_EQ(def->required_permission, "platform:customer:export");
  ASSERT_NE(r->FindService("customer-service"), nullptr);
}

TEST(Registry, DemoConfigLoads) {
  ExpectShippedConfigLoads("config/demo.yaml");
  const std::string path = std::string(EC_SOURCE_DIR) + "/config/demo.yaml";
  StatusOr<AppConfig> app = LoadConfig(path);
  ASSERT_TRUE(app.ok());
  EXPECT_EQ(app->server.port, 8080);
  // The sample service's side of demo.yaml, and that the center presents the
  // token it expects: tests/sdk/customer_service_config_test.cc.
  StatusOr<RegistrySnapshot> r = LoadRegistry(path, nullptr);
  ASSERT_TRUE(r.ok());
  const ExportDefinition* def = r->Find("CUSTOMER_LIST");
  ASSERT_EQ(def->parameters.size(), 2u);
  EXPECT_EQ(def->parameters[1].allowed, (std::vector<std::string>{"ACTIVE", "INACTIVE", "FROZEN"}));
  // The rich-column types of both routes, with the definition's languages and labels.
  for (const char* rich : {"ORDER_LINES", "ORDER_LIST_RICH"}) {
    const ExportDefinition* d = r->Find(rich);
    ASSERT_NE(d, nullptr) << rich;
    EXPECT_EQ(d->locale, "zh-CN");
    EXPECT_EQ(d->totals_label.In({"en", d->locale}), "Total");
    ASSERT_EQ(d->column_labels.size(), 1u);
    EXPECT_EQ(d->column_labels[0].key, "channel");
  }
}

TEST(Registry, SampleConfigLoads) { ExpectShippedConfigLoads("config/export-center.sample.yaml"); }

#ifdef EXPORT_CENTER_WITH_ROCKETMQ
TEST(Registry, RocketMqSampleConfigLoads) {
  ExpectShippedConfigLoads("config/rocketmq.sample.yaml");
  StatusOr<AppConfig> app = LoadConfig(std::string(EC_SOURCE_DIR) + "/config/rocketmq.sample.yaml");
  ASSERT_TRUE(app.ok());
  EXPECT_EQ(app->channel.kind, "rocketmq");
  EXPECT_EQ(app->channel.rocketmq.topic_prefix, "") << "production's explicit empty prefix";
  EXPECT_EQ(app->database.kind, "postgres");
}
#endif

// ---- Reload ----

const char kConfigHead[] = R"(
auth:
  jwt-hs256-secret: test-secret-0123456789abcdef0123456789
  download-url-secret: test-download-0123456789abcdef0123456789
  jwt-issuer: test-issuer
  jwt-audience: export-center
)";

// The loader app/ hands to the registry.
registry::SnapshotLoader ReloadLoader() {
  return [](const std::string& path) { return LoadRegistryForReload(path, nullptr); };
}

class RegistryReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ec_registry_reload_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "config.yaml").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& registry_yaml) {
    std::ofstream(path_, std::ios::trunc) << kConfigHead << registry_yaml;
  }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(RegistryReloadTest, InvalidFileKeepsOldSetAndValidFileSwaps) {
  Registry registry(Parse(kValid).value(), ReloadLoader());
  auto before = registry.Current();

  Write(Replace(kValid, "batch-size: 500", "batch-size: 20"));
  Status s = registry.Reload(path_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("definitions.CUSTOMER_LIST.batch-size: 20 is out of range"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(registry.Current(), before);

  Write(Replace(kValid, "batch-size: 500", "batch-size: 100"));
  Status swapped = registry.Reload(path_);
  ASSERT_TRUE(swapped.ok()) << swapped.ToString();
  EXPECT_NE(registry.Current(), before);
  EXPECT_EQ(registry.Current()->Find("CUSTOMER_LIST")->batch_size, 100);
  EXPECT_EQ(before->Find("CUSTOMER_LIST")->batch_size, 500);  // old snapshot untouched
}

TEST_F(RegistryReloadTest, SyntaxErrorReportsLineAndKeepsOldSet) {
  Registry registry(Parse(kValid).value(), ReloadLoader());
  auto before = registry.Current();
  std::ofstream(path_, std::ios::trunc) << "definitions:\n  A: [unclosed\n";
  Status s = registry.Reload(path_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(path_ + ":"), std::string::npos) << s.message();
  EXPECT_EQ(registry.Current(), before);
}

TEST_F(RegistryReloadTest, MissingFileKeepsOldSet) {
  Registry registry(Parse(kValid).value(), ReloadLoader());
  auto before = registry.Current();
  EXPECT_EQ(registry.Reload(path_ + ".missing").code(), StatusCode::kNotFound);
  EXPECT_EQ(registry.Current(), before);
}

TEST_F(RegistryReloadTest, TopLevelTypoIsRefusedNotAnEmptyRegistry) {
  Registry registry(Parse(kValid).value(), ReloadLoader());
  Write(Replace(kValid, "definitions:", "definitons:"));
  Status s = registry.Reload(path_);
  EXPECT_NE(s.message().find("definitons: unknown key (did you mean 'definitions'?)"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(registry.Current()->definitions.size(), 2u);
}

TEST_F(RegistryReloadTest, ProviderServicesChangeNeedsRestart) {
  Registry registry(Parse(kValid).value(), ReloadLoader());
  Write(Replace(kValid, "http://127.0.0.1:8081", "http://10.0.0.9:8081"));
  Status s = registry.Reload(path_);
  EXPECT_NE(s.message().find("provider-services: differs from the allow-list"), std::string::npos)
      << s.message();
  EXPECT_EQ(registry.Current()->FindService("customer-service")->base_url, "http://127.0.0.1:8081");
}

// ---- file-password (docs/configuration.md#password-protected-files-file-password)
// -----------------------

TEST(Registry, FilePasswordRulesParse) {
  StatusOr<RegistrySnapshot> plain = Parse(kValid);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->Find("CUSTOMER_LIST")->file_password, registry::FilePasswordRule::kNone);
  StatusOr<RegistrySnapshot> r = Parse(Replace(
      Replace(kValid, "    timezone: Asia/Shanghai\n",
              "    timezone: Asia/Shanghai\n    file-password: optional\n"
              "    columns:\n      id_card: {required-permission: a:b:c, without: hash, "
              "require-file-password: true}\n      phone: {required-permission: a:b:c}\n"),
      "    app-scope: MERCHANT\n", "    app-scope: MERCHANT\n    file-password: required\n"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ExportDefinition* def = r->Find("CUSTOMER_LIST");
  EXPECT_EQ(def->file_password, registry::FilePasswordRule::kOptional);
  ASSERT_EQ(def->column_rules.size(), 2u);
  EXPECT_TRUE(def->column_rules[0].require_file_password);
  EXPECT_FALSE(def->column_rules[1].require_file_password);
  EXPECT_EQ(r->Find("ORDER_SQL")->file_password, registry::FilePasswordRule::kRequired);
}

TEST(Registry, FilePasswordProblems) {
  ExpectProblem(Replace(kValid, "    timezone: Asia/Shanghai\n",
                        "    timezone: Asia/Shanghai\n    file-password: always\n"),
                "definitions.CUSTOMER_LIST.file-password:");
  ExpectProblem(
      Replace(kValid, "    timezone: Asia/Shanghai\n",
              "    timezone: Asia/Shanghai\n    columns:\n      id_card: {required-permission: "
              "a:b:c, require-file-password: true}\n"),
      "definitions.CUSTOMER_LIST.columns.id_card.require-file-password: needs a type that takes "
      "a file password");
  ExpectProblem(
      Replace(kValid, "    timezone: Asia/Shanghai\n",
              "    timezone: Asia/Shanghai\n    file-password: optional\n    columns:\n"
              "      id_card: {required-permission: a:b:c, require-file-password: yes}\n"),
      "definitions.CUSTOMER_LIST.columns.id_card.require-file-password:");
}

}  // namespace
}  // namespace export_center::config
