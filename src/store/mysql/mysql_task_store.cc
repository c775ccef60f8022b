#include "store/mysql/mysql_task_store.h"

#include "store/mysql/mysql_database.h"
#include "store/sql_task_store.h"

namespace export_center::store {
namespace {

StatusOr<std::shared_ptr<Database>> Open(const std::string& url, int pool_size,
                                         const SessionTimeouts& timeouts,
                                         const ClientTlsOptions& tls) {
  MysqlDatabaseOptions options;
  options.pool_size = pool_size;
  options.timeouts = timeouts;
  options.tls = tls;
  EC_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, OpenMysqlDatabase(url, options));
  return std::shared_ptr<Database>(std::move(db));
}

}  // namespace

StatusOr<std::unique_ptr<TaskStore>> OpenMysqlTaskStore(const std::string& url, int pool_size,
                                                        const SessionTimeouts& timeouts,
                                                        const ClientTlsOptions& tls) {
  EC_ASSIGN_OR_RETURN(std::shared_ptr<Database> db, Open(url, pool_size, timeouts, tls));
  return NewSqlTaskStore(std::move(db));
}

StatusOr<MysqlStoreWithDatabase> OpenMysqlTaskStoreWithDatabase(const std::string& url,
                                                                int pool_size) {
  EC_ASSIGN_OR_RETURN(std::shared_ptr<Database> db,
                      Open(url, pool_size, SessionTimeouts{}, ClientTlsOptions{}));
  return MysqlStoreWithDatabase{NewSqlTaskStore(db), db};
}

}  // namespace export_center::store
