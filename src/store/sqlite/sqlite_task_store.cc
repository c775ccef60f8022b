#include "store/sqlite/sqlite_task_store.h"

#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"

namespace export_center::store {

StatusOr<std::unique_ptr<TaskStore>> OpenSqliteTaskStore(const std::string& path) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, OpenSqliteDatabase(path));
  return NewSqlTaskStore(std::shared_ptr<Database>(std::move(db)));
}

StatusOr<SqliteStoreWithDatabase> OpenSqliteTaskStoreWithDatabase(const std::string& path) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, OpenSqliteDatabase(path));
  std::shared_ptr<Database> shared(std::move(db));
  return SqliteStoreWithDatabase{NewSqlTaskStore(shared), shared};
}

}  // namespace export_center::store
