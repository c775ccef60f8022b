// customer-service: a sample business service serving CUSTOMER_LIST through
// the provider SDK. It owns its SQLite database and links no center code.
//
//   customer-service --config FILE   (reads the `customer-service:` section)

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "customer_db.h"
#include "customer_provider.h"
#include "fault_injector.h"
#include "order_scenario.h"
#include "sdk/provider_server.h"
#include "sdk/sql_scenario.h"

namespace customer_service {
namespace {

struct Config {
  std::string host = "127.0.0.1";
  int port = 8081;  // 0 picks a free port (printed on start-up)
  std::string sqlite_path = "var/customer-service.db";
  std::string internal_token;
  std::string snapshot_secret;
  int64_t seed_customers = 100000;
  int64_t seed_orders = 200000;    // ORDER_LIST (sql-template route)
  int64_t contract_version = 1;    // reported by /dispatch/version
};

// yaml-cpp throws; this is the edge where that stops.
bool LoadConfig(const std::string& path, Config* config, std::string* error) {
  try {
    YAML::Node root = YAML::LoadFile(path);
    YAML::Node section = root["customer-service"];
    if (!section || !section.IsMap()) {
      *error = path + ": no customer-service section";
      return false;
    }
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
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
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
  if (config->internal_token.empty())
    *error = "customer-service.internal-token is required";
  else if (config->snapshot_secret.size() < 16)
    *error = "customer-service.snapshot-secret needs >= 16 characters";
  else if (config->port < 0 || config->port > 65535)
    *error = "customer-service.port must be 0..65535";
  else if (config->seed_customers < 0 || config->seed_customers > 10000000)
    *error = "customer-service.seed-customers must be 0..10000000";
  else if (config->seed_orders < 0 || config->seed_orders > 10000000)
    *error = "customer-service.seed-orders must be 0..10000000";
  else if (config->contract_version < 1)
    *error = "customer-service.contract-version must be >= 1";
  return error->empty();
}

bool ParseArgs(int argc, char** argv, std::string* config_path) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      *config_path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      *config_path = arg.substr(9);
    } else {
      return false;
    }
  }
  return !config_path->empty();
}

int Run(const Config& config) {
  std::string error;
  auto db = CustomerDb::Open(config.sqlite_path, &error);
  if (!db) {
    std::fprintf(stderr, "customer-service: %s\n", error.c_str());
    return 1;
  }
  int64_t seeded = db->SeedIfEmpty(config.seed_customers, &error);
  if (seeded < 0) {
    std::fprintf(stderr, "customer-service: %s\n", error.c_str());
    return 1;
  }
  if (seeded > 0)
    std::fprintf(stderr, "customer-service: seeded %lld customers\n",
                 static_cast<long long>(seeded));

  int64_t orders = SeedOrdersIfEmpty(config.sqlite_path, config.seed_orders,
                                     config.seed_customers, &error);
  if (orders < 0) {
    std::fprintf(stderr, "customer-service: %s\n", error.c_str());
    return 1;
  }
  if (orders > 0)
    std::fprintf(stderr, "customer-service: seeded %lld orders\n", static_cast<long long>(orders));

  httplib::Server server;
  FaultInjector faults;
  faults.Install(server, config.internal_token);
  export_center::sdk::RegisterBatchProviders(
      server, config.internal_token,
      {std::make_shared<CustomerListProvider>(db.get(), config.snapshot_secret)});
  export_center::sdk::RegisterSqlScenarios(
      server, config.internal_token,
      {NewOrderListScenario(config.sqlite_path, false, config.contract_version),
       NewOrderListScenario(config.sqlite_path, true, config.contract_version),
       NewSplicedOrderScenario(config.sqlite_path, "status", config.contract_version),
       NewSplicedOrderScenario(config.sqlite_path, "keyword", config.contract_version)});
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });

  int port = config.port == 0 ? server.bind_to_any_port(config.host)
                              : (server.bind_to_port(config.host, config.port) ? config.port : -1);
  if (port <= 0) {
    std::fprintf(stderr, "customer-service: cannot listen on %s:%d\n", config.host.c_str(),
                 config.port);
    return 1;
  }
  std::thread listener([&server] { server.listen_after_bind(); });
  std::printf("customer-service listening on http://%s:%d\n", config.host.c_str(), port);
  std::fflush(stdout);

  // SIGTERM/SIGINT are blocked in every thread and taken here, so stopping
  // the server never runs inside a signal handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "customer-service: signal %d, shutting down\n", sig);
  server.stop();
  listener.join();
  return 0;
}

}  // namespace
}  // namespace customer_service

int main(int argc, char** argv) {
  // Block before any thread starts so that all threads inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::string config_path;
  if (!customer_service::ParseArgs(argc, argv, &config_path)) {
    std::fprintf(stderr, "usage: customer-service --config FILE\n");
    return 2;
  }
  customer_service::Config config;
  std::string error;
  if (!customer_service::LoadConfig(config_path, &config, &error)) {
    std::fprintf(stderr, "customer-service: %s\n", error.c_str());
    return 2;
  }
  return customer_service::Run(config);
}
