// The sample service's settings: the customer-service: section, which only
// examples/customer-service reads (the center skips it).

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "config/registry_yaml.h"
#include "service_config.h"

namespace customer_service {
namespace {

// The smallest valid section: the token and the secret.
const char kMinimal[] = R"(
customer-service:
  internal-token: tok-0123456789abcdef
  snapshot-secret: snap-0123456789abcdef0123456789abcd
)";

// Unsets the env vars a test may set, whatever the outcome.
class ServiceConfigTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"CUSTOMER_SERVICE_INTERNAL_TOKEN", "CUSTOMER_SERVICE_SNAPSHOT_SECRET",
                             "CUSTOMER_SERVICE_SEED_ORDERS", "CUSTOMER_SERVICE_CONTRACT_VERSION"}) {
      unsetenv(name);
    }
  }
  static std::string Problem(const std::string& yaml) {
    Config c;
    std::string error;
    EXPECT_FALSE(ParseConfig(yaml, "test.yaml", &c, &error)) << yaml;
    return error;
  }
};

TEST_F(ServiceConfigTest, Defaults) {
  Config c;
  std::string error;
  ASSERT_TRUE(ParseConfig(kMinimal, "test.yaml", &c, &error)) << error;
  EXPECT_EQ(c.host, "127.0.0.1");
  EXPECT_EQ(c.port, 8081);
  EXPECT_EQ(c.sqlite_path, "var/customer-service.db");
  EXPECT_EQ(c.seed_customers, 100000);
  EXPECT_EQ(c.seed_orders, 200000);
  EXPECT_EQ(c.contract_version, 1);
}

TEST_F(ServiceConfigTest, EveryKeyOverrides) {
  Config c;
  std::string error;
  ASSERT_TRUE(ParseConfig(R"(
customer-service:
  host: 0.0.0.0
  port: 9001
  sqlite-path: cs.db
  internal-token: tok-0123456789abcdef
  snapshot-secret: snap-0123456789abcdef0123456789abcd
  seed-customers: 10
  seed-orders: 25
  contract-version: 7
  replica-dialect: postgres
)",
                          "test.yaml", &c, &error))
      << error;
  EXPECT_EQ(c.host, "0.0.0.0");
  EXPECT_EQ(c.port, 9001);
  EXPECT_EQ(c.sqlite_path, "cs.db");
  EXPECT_EQ(c.internal_token, "tok-0123456789abcdef");
  EXPECT_EQ(c.snapshot_secret, "snap-0123456789abcdef0123456789abcd");
  EXPECT_EQ(c.seed_customers, 10);
  EXPECT_EQ(c.seed_orders, 25);
  EXPECT_EQ(c.contract_version, 7);
  EXPECT_EQ(c.replica_dialect, "postgres");
}

TEST_F(ServiceConfigTest, EnvironmentWinsOverTheFile) {
  setenv("CUSTOMER_SERVICE_INTERNAL_TOKEN", "env-token-0123456789", 1);
  setenv("CUSTOMER_SERVICE_SEED_ORDERS", "30", 1);
  setenv("CUSTOMER_SERVICE_CONTRACT_VERSION", "4", 1);
  Config c;
  std::string error;
  ASSERT_TRUE(
      ParseConfig(std::string(kMinimal) + "  contract-version: 2\n", "test.yaml", &c, &error))
      << error;
  EXPECT_EQ(c.internal_token, "env-token-0123456789");
  EXPECT_EQ(c.seed_orders, 30);
  EXPECT_EQ(c.contract_version, 4);
}

TEST_F(ServiceConfigTest, RangeErrors) {
  EXPECT_EQ(Problem(std::string(kMinimal) + "  contract-version: 0\n"),
            "customer-service.contract-version must be >= 1");
  EXPECT_EQ(Problem(std::string(kMinimal) + "  contract-version: 9007199254740993\n"),
            "customer-service.contract-version must be <= 9007199254740992");
  EXPECT_EQ(Problem(std::string(kMinimal) + "  seed-orders: -1\n"),
            "customer-service.seed-orders must be 0..10000000");
  EXPECT_EQ(Problem(std::string(kMinimal) + "  port: 65536\n"),
            "customer-service.port must be 0..65535");
  EXPECT_EQ(Problem(std::string(kMinimal) + "  replica-dialect: oracle\n"),
            "customer-service.replica-dialect must be sqlite, postgres or mysql");
}

TEST_F(ServiceConfigTest, RequiredValues) {
  EXPECT_EQ(Problem("customer-service:\n  snapshot-secret: snap-0123456789abcdef0123456789abcd\n"),
            "customer-service.internal-token (or CUSTOMER_SERVICE_INTERNAL_TOKEN) is empty");
  EXPECT_EQ(Problem("customer-service:\n  internal-token: tok-0123456789abcdef\n"
                    "  snapshot-secret: short\n"),
            "customer-service.snapshot-secret (or CUSTOMER_SERVICE_SNAPSHOT_SECRET) is too short "
            "(5 bytes; at least 32)");
  EXPECT_EQ(Problem(std::string(kMinimal) + "  host: \"\"\n"),
            "customer-service.host must not be empty");
  EXPECT_EQ(Problem(std::string(kMinimal) + "  sqlite-path: \"\"\n"),
            "customer-service.sqlite-path must not be empty");
  EXPECT_EQ(Problem("server: {port: 1}\n"), "test.yaml: no customer-service section");
}

// The rule of sdk/secret_check.h, named by the key: a short token, and a
// placeholder nobody resolved (a template copied without its variable).
TEST_F(ServiceConfigTest, SecretsAreRefusedWhenShortOrAnUnresolvedPlaceholder) {
  EXPECT_EQ(Problem("customer-service:\n  internal-token: tok\n"
                    "  snapshot-secret: snap-0123456789abcdef0123456789abcd\n"),
            "customer-service.internal-token (or CUSTOMER_SERVICE_INTERNAL_TOKEN) is too short "
            "(3 bytes; at least 16)");
  EXPECT_EQ(Problem("customer-service:\n  internal-token: ${CUSTOMER_SERVICE_INTERNAL_TOKEN}\n"
                    "  snapshot-secret: snap-0123456789abcdef0123456789abcd\n"),
            "customer-service.internal-token (or CUSTOMER_SERVICE_INTERNAL_TOKEN) is the "
            "unresolved placeholder ${CUSTOMER_SERVICE_INTERNAL_TOKEN}");
  EXPECT_EQ(Problem("customer-service:\n  internal-token: tok-0123456789abcdef\n"
                    "  snapshot-secret: \"${SNAPSHOT_SECRET:-x}-0123456789abcdef0123456789\"\n"),
            "customer-service.snapshot-secret (or CUSTOMER_SERVICE_SNAPSHOT_SECRET) contains an "
            "unresolved ${...} placeholder");
}

TEST_F(ServiceConfigTest, UnknownAndDuplicateKeys) {
  EXPECT_EQ(Problem(std::string(kMinimal) + "  prot: 1\n"),
            "customer-service.prot: unknown key; allowed: host, port, sqlite-path, "
            "internal-token, snapshot-secret, seed-customers, seed-orders, contract-version, "
            "replica-dialect");
  EXPECT_EQ(Problem(std::string(kMinimal) + "  port: 1\n  port: 2\n"),
            "customer-service.port: duplicate key");
}

// demo.yaml runs the center and this service from one file: the center must
// present the token the service expects.
TEST_F(ServiceConfigTest, DemoConfigLoadsAndMatchesTheCenter) {
  const std::string path = std::string(EC_SOURCE_DIR) + "/config/demo.yaml";
  Config c;
  std::string error;
  ASSERT_TRUE(LoadConfig(path, &c, &error)) << error;
  EXPECT_EQ(c.port, 8081);
  EXPECT_EQ(c.seed_customers, 100000);
  auto registry = export_center::config::LoadRegistry(path, nullptr);
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  ASSERT_NE(registry->FindService("customer-service"), nullptr);
  EXPECT_EQ(registry->FindService("customer-service")->internal_token, c.internal_token);
}

}  // namespace
}  // namespace customer_service
