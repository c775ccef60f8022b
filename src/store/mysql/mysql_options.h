#pragma once
// The options of the MySQL/MariaDB task store (mysql_task_store.h), beside it
// so that config/, which fills them, needs no store code. Plain data:
// standard and other options headers only (scripts/check-deps.py).

#include <string>

#include "common/client_tls_options.h"

namespace export_center::store {

// database.kind: mysql (MySQL 8 or MariaDB 10.11).
struct MysqlStoreOptions {
  // database.mysql-url: mysql://user:pass@host:port/db; env
  // EXPORT_CENTER_DATABASE_URL replaces it.
  std::string url;
  // database.ssl-mode / ssl-ca / ssl-cert / ssl-key:
  // docs/configuration.md#database-tls.
  ClientTlsOptions tls;
};

}  // namespace export_center::store
