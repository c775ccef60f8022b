#include "customer_db.h"

#include <sqlite3.h>

#include <array>
#include <filesystem>

#include "sdk/wire_values.h"

namespace customer_service {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS customer (
  id INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  customer_code TEXT NOT NULL,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  balance_cents INTEGER NOT NULL,
  credit_limit INTEGER NOT NULL,
  vip INTEGER NOT NULL,
  registered_on TEXT NOT NULL,
  last_order_at INTEGER,
  remarks TEXT
);
CREATE INDEX IF NOT EXISTS customer_tenant_id ON customer(tenant_id, id);
)sql";

// Shared by Page and Count so both filter identically.
constexpr char kFilter[] =
    " WHERE tenant_id = ?1 AND id > ?2 AND id <= ?3"
    " AND (?4 IS NULL OR instr(name, ?4) > 0 OR instr(customer_code, ?4) > 0)"
    " AND (?5 IS NULL OR status = ?5)";

constexpr int64_t kFirstId = 10000000001;  // past 32 bits, so ids must travel as strings
constexpr int64_t kMsPerDay = 86400000;

// splitmix64: a fixed, portable generator, so every machine seeds the same
// rows (std:: distributions differ between standard libraries).
class Prng {
 public:
  explicit Prng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  int64_t Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t state_;
};

constexpr std::array<const char*, 12> kCities = {"北京", "上海", "广州", "深圳", "杭州", "成都",
                                                 "武汉", "南京", "苏州", "西安", "重庆", "天津"};
constexpr std::array<const char*, 15> kWords = {"华", "盛", "鑫", "泰", "恒", "瑞", "安", "达",
                                                "信", "联", "通", "创", "远", "嘉", "宏"};
constexpr std::array<const char*, 8> kTrades = {"物流", "贸易",   "科技", "实业",
                                                "商贸", "供应链", "电子", "食品"};
// Cells a spreadsheet would run as formulas, plus emoji and control bytes.
constexpr std::array<const char*, 8> kHostileRemarks = {
    "=HYPERLINK(\"http://example.invalid\",\"点我\")",
    "+86 138 0000 0000",
    "-5% 折扣客户",
    "@SUM(A1:A9)",
    "VIP 客户 😀🚚",
    "\t制表符开头",
    "包含,逗号\"引号\"\n和换行",
    "=1+1",
};

std::string DateText(int64_t days) {
  return export_center::sdk::DateTimeValue(days * kMsPerDay).get<std::string>().substr(0, 10);
}

Customer MakeCustomer(int64_t i, Prng& rng) {
  Customer c;
  c.id = kFirstId + i;
  c.tenant_id = i % 5 < 3 ? "1" : "2";  // 60 / 40
  char code[24];
  std::snprintf(code, sizeof code, "CUS%08lld", static_cast<long long>(i + 1));
  c.customer_code = code;
  std::string middle = i % 37 == 0 ? "柏悦"
                                   : std::string(kWords[rng.Below(kWords.size())]) +
                                         kWords[rng.Below(kWords.size())];
  c.name = std::string(kCities[rng.Below(kCities.size())]) + middle +
           kTrades[rng.Below(kTrades.size())] + "有限公司";
  int64_t s = rng.Below(10);
  c.status = s < 7 ? "ACTIVE" : s < 9 ? "INACTIVE" : "FROZEN";
  c.balance_cents = rng.Below(100000000) - 5000000;  // -50 000.00 .. 949 999.99
  if (i % 1000 == 6) c.balance_cents = 6814110;      // 68141.10, the classic float trap
  c.credit_limit = rng.Below(5000) * 1000;
  if (i == 7) c.credit_limit = 9007199254740993LL;  // 2^53 + 1: survives only as a string
  c.vip = rng.Below(100) < 15;
  static const int64_t kFrom = 16436;  // 2015-01-01
  static const int64_t kTo = 20634;    // 2026-06-30
  c.registered_on = DateText(kFrom + rng.Below(kTo - kFrom + 1));
  if (rng.Below(10) != 0) {
    static const int64_t kOrderFrom = 1704067200000;  // 2024-01-01T00:00:00Z
    c.last_order_at = kOrderFrom + rng.Below(940LL * kMsPerDay);
  }
  if (i % 211 == 5) {
    c.remarks = kHostileRemarks[(i / 211) % kHostileRemarks.size()];
  } else if (rng.Below(4) == 0) {
    c.remarks = "重点客户，月结30天";
  }
  return c;
}

void BindOptionalText(sqlite3_stmt* stmt, int index, const std::optional<std::string>& v) {
  if (v && !v->empty()) {
    sqlite3_bind_text(stmt, index, v->data(), static_cast<int>(v->size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_bind_null(stmt, index);
  }
}

void BindFilter(sqlite3_stmt* stmt, const CustomerFilter& f, int64_t after_id, int64_t max_id) {
  sqlite3_bind_text(stmt, 1, f.tenant_id.data(), static_cast<int>(f.tenant_id.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_int64(stmt, 2, after_id);
  sqlite3_bind_int64(stmt, 3, max_id);
  BindOptionalText(stmt, 4, f.keyword);
  BindOptionalText(stmt, 5, f.status);
}

std::string Text(sqlite3_stmt* stmt, int col) {
  const unsigned char* p = sqlite3_column_text(stmt, col);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt, col)) : "";
}

Customer ReadCustomer(sqlite3_stmt* stmt) {
  Customer c;
  c.id = sqlite3_column_int64(stmt, 0);
  c.tenant_id = Text(stmt, 1);
  c.customer_code = Text(stmt, 2);
  c.name = Text(stmt, 3);
  c.status = Text(stmt, 4);
  c.balance_cents = sqlite3_column_int64(stmt, 5);
  c.credit_limit = sqlite3_column_int64(stmt, 6);
  c.vip = sqlite3_column_int64(stmt, 7) != 0;
  c.registered_on = Text(stmt, 8);
  if (sqlite3_column_type(stmt, 9) != SQLITE_NULL) c.last_order_at = sqlite3_column_int64(stmt, 9);
  if (sqlite3_column_type(stmt, 10) != SQLITE_NULL) c.remarks = Text(stmt, 10);
  return c;
}

// Finalizes a statement on every path.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

}  // namespace

std::unique_ptr<CustomerDb> CustomerDb::Open(const std::string& path, std::string* error) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    *error = "cannot open " + path + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);
  char* msg = nullptr;
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL;", nullptr, nullptr, &msg) != SQLITE_OK ||
      sqlite3_exec(db, kSchema, nullptr, nullptr, &msg) != SQLITE_OK) {
    *error = std::string("cannot create schema: ") + (msg ? msg : "?");
    sqlite3_free(msg);
    sqlite3_close(db);
    return nullptr;
  }
  return std::unique_ptr<CustomerDb>(new CustomerDb(db));
}

// Before closing, let SQLite refresh the statistics of the tables this
// connection queried if they went stale (the PRAGMA does nothing otherwise).
CustomerDb::~CustomerDb() {
  sqlite3_exec(db_, "PRAGMA optimize", nullptr, nullptr, nullptr);
  sqlite3_close(db_);
}

int64_t CustomerDb::SeedIfEmpty(int64_t count, std::string* error) {
  std::lock_guard lock(mu_);
  Stmt probe;
  sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM customer", -1, &probe.s, nullptr);
  if (sqlite3_step(probe.s) != SQLITE_ROW) {
    *error = sqlite3_errmsg(db_);
    return -1;
  }
  if (sqlite3_column_int64(probe.s, 0) > 0) return 0;
  // One transaction and one prepared statement: 100 000 rows in well under
  // a second instead of one fsync per row.
  sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  Stmt insert;
  sqlite3_prepare_v2(db_,
                     "INSERT INTO customer (id, tenant_id, customer_code, name, status, "
                     "balance_cents, credit_limit, vip, registered_on, last_order_at, remarks) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                     -1, &insert.s, nullptr);
  Prng rng(20260803);
  for (int64_t i = 0; i < count; ++i) {
    Customer c = MakeCustomer(i, rng);
    sqlite3_bind_int64(insert.s, 1, c.id);
    sqlite3_bind_text(insert.s, 2, c.tenant_id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert.s, 3, c.customer_code.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert.s, 4, c.name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert.s, 5, c.status.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(insert.s, 6, c.balance_cents);
    sqlite3_bind_int64(insert.s, 7, c.credit_limit);
    sqlite3_bind_int(insert.s, 8, c.vip ? 1 : 0);
    sqlite3_bind_text(insert.s, 9, c.registered_on.c_str(), -1, SQLITE_TRANSIENT);
    if (c.last_order_at) {
      sqlite3_bind_int64(insert.s, 10, *c.last_order_at);
    } else {
      sqlite3_bind_null(insert.s, 10);
    }
    if (c.remarks) {
      sqlite3_bind_text(insert.s, 11, c.remarks->c_str(), -1, SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_null(insert.s, 11);
    }
    if (sqlite3_step(insert.s) != SQLITE_DONE) {
      *error = std::string("seed failed: ") + sqlite3_errmsg(db_);
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return -1;
    }
    sqlite3_reset(insert.s);
  }
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    *error = std::string("seed commit failed: ") + sqlite3_errmsg(db_);
    return -1;
  }
  // Without statistics SQLite guesses an index from its columns alone, and
  // for `tenant_id = ? AND customer_code IN (...)` it picks customer_tenant_id
  // and reads half the table per lookup (docs/sql-template-route.md#statistics).
  if (sqlite3_exec(db_, "ANALYZE customer", nullptr, nullptr, nullptr) != SQLITE_OK) {
    *error = std::string("analyze failed: ") + sqlite3_errmsg(db_);
    return -1;
  }
  return count;
}

int64_t CustomerDb::MaxId() {
  std::lock_guard lock(mu_);
  Stmt stmt;
  sqlite3_prepare_v2(db_, "SELECT COALESCE(MAX(id), 0) FROM customer", -1, &stmt.s, nullptr);
  return sqlite3_step(stmt.s) == SQLITE_ROW ? sqlite3_column_int64(stmt.s, 0) : -1;
}

bool CustomerDb::Page(const CustomerFilter& filter, int64_t after_id, int64_t max_id, int limit,
                      std::vector<Customer>* out, std::string* error) {
  std::lock_guard lock(mu_);
  std::string sql =
      std::string(
          "SELECT id, tenant_id, customer_code, name, status, balance_cents, credit_limit, "
          "vip, registered_on, last_order_at, remarks FROM customer") +
      kFilter + " ORDER BY id LIMIT ?6";
  Stmt stmt;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt.s, nullptr) != SQLITE_OK) {
    *error = sqlite3_errmsg(db_);
    return false;
  }
  BindFilter(stmt.s, filter, after_id, max_id);
  sqlite3_bind_int(stmt.s, 6, limit);
  int rc;
  while ((rc = sqlite3_step(stmt.s)) == SQLITE_ROW) out->push_back(ReadCustomer(stmt.s));
  if (rc != SQLITE_DONE) {
    *error = sqlite3_errmsg(db_);
    return false;
  }
  return true;
}

int64_t CustomerDb::Count(const CustomerFilter& filter, int64_t max_id) {
  std::lock_guard lock(mu_);
  std::string sql = std::string("SELECT COUNT(*) FROM customer") + kFilter;
  Stmt stmt;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt.s, nullptr) != SQLITE_OK) return -1;
  BindFilter(stmt.s, filter, 0, max_id);
  return sqlite3_step(stmt.s) == SQLITE_ROW ? sqlite3_column_int64(stmt.s, 0) : -1;
}

}  // namespace customer_service
