#include "source/datasource/sqlite/sqlite_datasource.h"

#include <sqlite3.h>

#include <memory>

namespace export_center::source {
namespace {

// SQLITE_BUSY/LOCKED/CANTOPEN are worth a later retry; the rest is the SQL's fault.
Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string text = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_CANTOPEN ||
      primary == SQLITE_IOERR || primary == SQLITE_NOMEM) {
    return Unavailable(text);
  }
  return InvalidArgument(text);
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

Status Bind(sqlite3* db, sqlite3_stmt* stmt, const std::vector<nlohmann::json>& params) {
  if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(stmt)) {
    return InvalidArgument("statement has " + std::to_string(sqlite3_bind_parameter_count(stmt)) +
                           " placeholders but " + std::to_string(params.size()) + " values");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& v = params[i];
    int idx = static_cast<int>(i) + 1;
    int rc = SQLITE_OK;
    if (v.is_null()) {
      rc = sqlite3_bind_null(stmt, idx);
    } else if (v.is_boolean()) {
      rc = sqlite3_bind_int(stmt, idx, v.get<bool>() ? 1 : 0);
    } else if (v.is_number_integer()) {
      rc = sqlite3_bind_int64(stmt, idx, v.get<int64_t>());
    } else if (v.is_number()) {
      rc = sqlite3_bind_double(stmt, idx, v.get<double>());
    } else if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      rc = sqlite3_bind_text(stmt, idx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    } else {
      return InvalidArgument("parameter " + std::to_string(idx) + " is not a scalar");
    }
    if (rc != SQLITE_OK) return SqliteError(db, rc, "bind");
  }
  return Status::Ok();
}

class SqliteDatasource : public ReadOnlyDatasource {
 public:
  SqliteDatasource(std::string path, int busy_timeout_ms)
      : path_(std::move(path)), busy_timeout_ms_(busy_timeout_ms) {}

  std::string_view kind() const override { return "sqlite"; }

  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<nlohmann::json>& params,
                            std::string_view schema) override {
    if (!schema.empty() && schema != "main") {
      return InvalidArgument("a sqlite datasource has no schema " + std::string(schema));
    }
    sqlite3* raw = nullptr;
    int rc =
        sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    std::unique_ptr<sqlite3, DbCloser> db(raw);
    if (rc != SQLITE_OK) return Unavailable("cannot open sqlite datasource " + path_);
    sqlite3_busy_timeout(db.get(), busy_timeout_ms_);
    sqlite3_stmt* raw_stmt = nullptr;
    const char* tail = nullptr;
    rc = sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &raw_stmt, &tail);
    std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt(raw_stmt);
    if (rc != SQLITE_OK) return SqliteError(db.get(), rc, "prepare");
    if (stmt == nullptr) return InvalidArgument("empty statement");
    EC_RETURN_IF_ERROR(Bind(db.get(), stmt.get(), params));
    return Fetch(db.get(), stmt.get());
  }

 private:
  static StatusOr<ResultSet> Fetch(sqlite3* db, sqlite3_stmt* stmt) {
    ResultSet out;
    int n = sqlite3_column_count(stmt);
    for (int i = 0; i < n; ++i) out.columns.emplace_back(sqlite3_column_name(stmt, i));
    while (true) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) return out;
      if (rc != SQLITE_ROW) return SqliteError(db, rc, "step");
      std::vector<std::optional<std::string>> row(n);
      for (int i = 0; i < n; ++i) {
        if (sqlite3_column_type(stmt, i) == SQLITE_NULL) continue;
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
        row[i] = std::string(text, sqlite3_column_bytes(stmt, i));
      }
      out.rows.push_back(std::move(row));
    }
  }

  std::string path_;
  int busy_timeout_ms_;
};

}  // namespace

std::unique_ptr<ReadOnlyDatasource> NewSqliteDatasource(const std::string& path,
                                                        int busy_timeout_ms) {
  return std::make_unique<SqliteDatasource>(path, busy_timeout_ms);
}

}  // namespace export_center::source
