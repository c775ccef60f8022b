#pragma once
// The sample service's settings: the `customer-service:` section of the
// config file it shares with the center (config/demo.yaml). This is the only
// reader of that section; the center accepts it and skips it.
//
// A set, non-empty environment variable wins over the file:
//   CUSTOMER_SERVICE_INTERNAL_TOKEN, CUSTOMER_SERVICE_SNAPSHOT_SECRET,
//   CUSTOMER_SERVICE_SEED_ORDERS, CUSTOMER_SERVICE_CONTRACT_VERSION.

#include <cstdint>
#include <string>

namespace customer_service {

struct Config {
  std::string host = "127.0.0.1";
  int port = 8081;  // 0 picks a free port (printed on start-up)
  std::string sqlite_path = "var/customer-service.db";
  std::string internal_token;
  std::string snapshot_secret;
  int64_t seed_customers = 100000;
  int64_t seed_orders = 200000;  // ORDER_LIST (sql-template route)
  int64_t contract_version = 1;  // reported by /dispatch/version
  // The SQL dialect of the read-only replica the center pages for ORDER_LIST:
  // sqlite (the service's own file), postgres or mysql. The template is the
  // list's own query, so it is written for the database it runs on.
  std::string replica_dialect = "sqlite";
};

// Reads the section of the YAML file at `path`, applies the environment and
// checks every value. On a problem returns false with the first one in
// `*error`: an unknown or duplicate key, a value of the wrong type or out of
// range, a missing token or secret.
bool LoadConfig(const std::string& path, Config* config, std::string* error);

// The same from YAML text; `path` only names it in messages.
bool ParseConfig(const std::string& yaml, const std::string& path, Config* config,
                 std::string* error);

}  // namespace customer_service
