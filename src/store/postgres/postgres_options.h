#pragma once
// The options of the PostgreSQL task store (postgres_task_store.h), beside it
// so that config/, which fills them, needs no store code. Plain data:
// standard headers only (scripts/check-deps.py).

#include <string>

namespace export_center::store {

// database.kind: postgres.
struct PostgresStoreOptions {
  // database.postgres-url: postgresql://user:pass@host:port/db; env
  // EXPORT_CENTER_DATABASE_URL replaces it. A URL carries sslmode itself.
  std::string url;
};

}  // namespace export_center::store
