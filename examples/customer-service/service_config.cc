#include "service_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <set>

#include "sdk/secret_check.h"

namespace customer_service {
namespace sdk = export_center::sdk;
namespace {

const char* const kKeys[] = {
    "host",           "port",        "sqlite-path",      "internal-token", "snapshot-secret",
    "seed-customers", "seed-orders", "contract-version", "replica-dialect"};

// The largest integer a JSON reader keeps exactly: the contract version goes
// over the wire.
constexpr int64_t kMaxContractVersion = int64_t{1} << 53;

// Typos must not pass silently: a misspelt key would leave its default.
bool CheckKeys(const YAML::Node& section, std::string* error) {
  std::set<std::string> seen;
  for (auto it = section.begin(); it != section.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      std::string allowed;
      for (const char* known : kKeys) allowed += (allowed.empty() ? "" : ", ") + std::string(known);
      *error = "customer-service." + key + ": unknown key; allowed: " + allowed;
      return false;
    }
    if (!seen.insert(key).second) {
      *error = "customer-service." + key + ": duplicate key";
      return false;
    }
  }
  return true;
}

// yaml-cpp throws; this is the edge where that stops.
bool ReadSection(const YAML::Node& root, const std::string& path, Config* config,
                 std::string* error) {
  try {
    YAML::Node section = root["customer-service"];
    if (!section || !section.IsMap()) {
      *error = path + ": no customer-service section";
      return false;
    }
    if (!CheckKeys(section, error)) return false;
    if (section["host"]) config->host = section["host"].as<std::string>();
    if (section["port"]) config->port = section["port"].as<int>();
    if (section["sqlite-path"]) config->sqlite_path = section["sqlite-path"].as<std::string>();
    if (section["internal-token"])
      config->internal_token = section["internal-token"].as<std::string>();
    if (section["snapshot-secret"])
      config->snapshot_secret = section["snapshot-secret"].as<std::string>();
    if (section["seed-customers"]) config->seed_customers = section["seed-customers"].as<int64_t>();
    if (section["seed-orders"]) config->seed_orders = section["seed-orders"].as<int64_t>();
    if (section["contract-version"])
      config->contract_version = section["contract-version"].as<int64_t>();
    if (section["replica-dialect"])
      config->replica_dialect = section["replica-dialect"].as<std::string>();
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  return true;
}

bool ApplyEnvironmentAndCheck(Config* config, std::string* error) {
  if (const char* env = std::getenv("CUSTOMER_SERVICE_INTERNAL_TOKEN"); env && *env) {
    config->internal_token = env;
  }
  if (const char* env = std::getenv("CUSTOMER_SERVICE_SNAPSHOT_SECRET"); env && *env) {
    config->snapshot_secret = env;
  }
  // The env wins over the file, so a test can restart the service with
  // another contract version without rewriting the shared config.
  if (const char* env = std::getenv("CUSTOMER_SERVICE_SEED_ORDERS"); env && *env) {
    config->seed_orders = std::atoll(env);
  }
  if (const char* env = std::getenv("CUSTOMER_SERVICE_CONTRACT_VERSION"); env && *env) {
    config->contract_version = std::atoll(env);
  }
  auto token_problem = sdk::SecretProblem(config->internal_token, sdk::kMinInternalTokenBytes);
  auto secret_problem = sdk::SecretProblem(config->snapshot_secret, sdk::kMinSnapshotSecretBytes);
  if (token_problem)
    *error =
        "customer-service.internal-token (or CUSTOMER_SERVICE_INTERNAL_TOKEN) " + *token_problem;
  else if (secret_problem)
    *error =
        "customer-service.snapshot-secret (or CUSTOMER_SERVICE_SNAPSHOT_SECRET) " + *secret_problem;
  else if (config->port < 0 || config->port > 65535)
    *error = "customer-service.port must be 0..65535";
  else if (config->seed_customers < 0 || config->seed_customers > 10000000)
    *error = "customer-service.seed-customers must be 0..10000000";
  else if (config->seed_orders < 0 || config->seed_orders > 10000000)
    *error = "customer-service.seed-orders must be 0..10000000";
  else if (config->contract_version < 1)
    *error = "customer-service.contract-version must be >= 1";
  else if (config->contract_version > kMaxContractVersion)
    *error = "customer-service.contract-version must be <= 9007199254740992";
  else if (config->host.empty())
    *error = "customer-service.host must not be empty";
  else if (config->sqlite_path.empty())
    *error = "customer-service.sqlite-path must not be empty";
  else if (config->replica_dialect != "sqlite" && config->replica_dialect != "postgres" &&
           config->replica_dialect != "mysql")
    *error = "customer-service.replica-dialect must be sqlite, postgres or mysql";
  return error->empty();
}

}  // namespace

bool LoadConfig(const std::string& path, Config* config, std::string* error) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  return ReadSection(root, path, config, error) && ApplyEnvironmentAndCheck(config, error);
}

bool ParseConfig(const std::string& yaml, const std::string& path, Config* config,
                 std::string* error) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  return ReadSection(root, path, config, error) && ApplyEnvironmentAndCheck(config, error);
}

}  // namespace customer_service
