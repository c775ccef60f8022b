#include "store/mysql/mysql_error.h"

#include <string>

namespace export_center::store {
namespace {

constexpr unsigned kDeadlock = 1213;
constexpr unsigned kLockWaitTimeout = 1205;

bool IsTransientServerError(unsigned code) {
  switch (code) {
    case kDeadlock:
    case kLockWaitTimeout:
    case 1020:  // ER_CHECKREAD: record changed since last read
    case 1040:  // ER_CON_COUNT_ERROR: too many connections
    case 1053:  // ER_SERVER_SHUTDOWN
    case 1135:  // ER_CANT_CREATE_THREAD
    case 1203:  // ER_TOO_MANY_USER_CONNECTIONS
    case 1317:  // ER_QUERY_INTERRUPTED
    case 1412:  // ER_TABLE_DEF_CHANGED: retry the transaction
    case 1637:  // ER_TOO_MANY_CONCURRENT_TRXS
    case 1927:  // ER_CONNECTION_KILLED (MariaDB)
    case 1969:  // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
    case 3024:  // ER_QUERY_TIMEOUT (MySQL max_execution_time)
      return true;
    default:
      return false;
  }
}

}  // namespace

StatusCode MysqlStatusCode(unsigned code, std::string_view sqlstate) {
  const bool client_api_misuse = code >= 2030 && code <= 2036;
  const bool client_error = code >= 2000 && code <= 2999;
  if ((client_error && !client_api_misuse) || IsTransientServerError(code) ||
      sqlstate.starts_with("08")) {
    return StatusCode::kUnavailable;
  }
  if (code == 1062 || code == 1586 || code == 1022) return StatusCode::kConflict;
  if (code == 1406) return StatusCode::kInvalidArgument;
  return StatusCode::kInternal;
}

Status MysqlError(unsigned code, std::string_view sqlstate, std::string_view message,
                  std::string_view what) {
  std::string text = "mysql " + std::string(what) + ": [" + std::to_string(code);
  if (!sqlstate.empty()) text += "/" + std::string(sqlstate);
  text += "] " + std::string(message);
  return Status(MysqlStatusCode(code, sqlstate), std::move(text));
}

bool IsRetryableLockConflict(unsigned code) {
  return code == kDeadlock || code == kLockWaitTimeout;
}

}  // namespace export_center::store
