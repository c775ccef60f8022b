#pragma once
// CustomerDb: the sample business service's own SQLite database.
//
//   customer(id INTEGER PRIMARY KEY, tenant_id TEXT, customer_code TEXT,
//            name TEXT, status TEXT, balance_cents INTEGER,
//            credit_limit INTEGER, vip INTEGER, registered_on TEXT,
//            last_order_at INTEGER NULL, remarks TEXT NULL)
//
// balance_cents is the balance × 100 (exact); registered_on is yyyy-MM-dd;
// last_order_at is epoch ms UTC. Thread-safe: one connection behind a mutex.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace customer_service {

struct Customer {
  int64_t id = 0;
  std::string tenant_id;
  std::string customer_code;
  std::string name;
  std::string status;
  int64_t balance_cents = 0;
  int64_t credit_limit = 0;
  bool vip = false;
  std::string registered_on;
  std::optional<int64_t> last_order_at;
  std::optional<std::string> remarks;
};

struct CustomerFilter {
  std::string tenant_id;
  std::optional<std::string> keyword;  // substring of name or customer_code
  std::optional<std::string> status;
};

class CustomerDb {
 public:
  // Opens (creating) the database and its schema. nullptr + *error on failure.
  static std::unique_ptr<CustomerDb> Open(const std::string& path, std::string* error);
  ~CustomerDb();
  CustomerDb(const CustomerDb&) = delete;
  CustomerDb& operator=(const CustomerDb&) = delete;

  // Seeds `count` deterministic customers if the table is empty. Returns the
  // number inserted (0 when already seeded), or -1 with *error.
  int64_t SeedIfEmpty(int64_t count, std::string* error);

  // Highest id, for the snapshot token. -1 on error.
  int64_t MaxId();
  // Matching customers with after_id < id <= max_id, ordered by id.
  bool Page(const CustomerFilter& filter, int64_t after_id, int64_t max_id, int limit,
            std::vector<Customer>* out, std::string* error);
  // Matching customers with id <= max_id. -1 on error.
  int64_t Count(const CustomerFilter& filter, int64_t max_id);

 private:
  explicit CustomerDb(sqlite3* db) : db_(db) {}

  std::mutex mu_;
  sqlite3* db_;  // guarded by mu_
};

}  // namespace customer_service
