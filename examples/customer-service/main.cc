// customer-service: a sample business service serving CUSTOMER_LIST through
// the provider SDK. It owns its SQLite database and links no center code.
//
//   customer-service --config FILE   (reads the `customer-service:` section)

#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "customer_db.h"
#include "customer_provider.h"
#include "fault_injector.h"
#include "order_lines_provider.h"
#include "order_scenario.h"
#include "sdk/provider_server.h"
#include "sdk/sql_scenario.h"
#include "service_config.h"

namespace customer_service {
namespace {

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

  int64_t orders =
      SeedOrdersIfEmpty(config.sqlite_path, config.seed_orders, config.seed_customers, &error);
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
      {std::make_shared<CustomerListProvider>(db.get(), config.snapshot_secret),
       std::make_shared<OrderLinesProvider>(config.sqlite_path, config.snapshot_secret)});
  export_center::sdk::RegisterSqlScenarios(
      server, config.internal_token,
      {NewOrderListScenario(config.sqlite_path, false, config.contract_version,
                            config.replica_dialect),
       NewOrderListScenario(config.sqlite_path, true, config.contract_version,
                            config.replica_dialect),
       NewSplicedOrderScenario(config.sqlite_path, "status", config.contract_version),
       NewSplicedOrderScenario(config.sqlite_path, "keyword", config.contract_version),
       NewRichOrderScenario(config.contract_version, config.replica_dialect)});
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
  // httplib's stop() does nothing before the listener thread has started its
  // loop, which then runs forever: a SIGTERM right after start (a test that
  // takes 0 ms on a loaded machine) waited for it. Wait for the loop first.
  for (int i = 0; i < 10000 && !server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
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
