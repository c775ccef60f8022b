#include "store/postgres/postgres_task_store.h"

#include "store/postgres/postgres_database.h"
#include "store/sql_task_store.h"

namespace export_center::store {

StatusOr<std::unique_ptr<TaskStore>> OpenPostgresTaskStore(const std::string& url, int pool_size,
                                                           const SessionTimeouts& timeouts) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, OpenPostgresDatabase(url, pool_size, timeouts));
  return NewSqlTaskStore(std::shared_ptr<Database>(std::move(db)));
}

StatusOr<PostgresStoreWithDatabase> OpenPostgresTaskStoreWithDatabase(const std::string& url,
                                                                      int pool_size) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, OpenPostgresDatabase(url, pool_size));
  std::shared_ptr<Database> shared(std::move(db));
  return PostgresStoreWithDatabase{NewSqlTaskStore(shared), shared};
}

}  // namespace export_center::store
