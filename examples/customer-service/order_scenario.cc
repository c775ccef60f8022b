#include "order_scenario.h"

#include <sqlite3.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

namespace customer_service {
namespace {

using export_center::sdk::ColumnType;
using export_center::sdk::ProviderError;
using export_center::sdk::Result;
using export_center::sdk::SqlColumn;
using nlohmann::json;

// The list query, written for the replica it runs on: only the amount's text
// and the substring test differ between the dialects.
std::string AmountExpression(const std::string& dialect) {
  if (dialect == "postgres") return "CAST(o.amount_cents / 100.0 AS NUMERIC(18,2))";
  if (dialect == "mysql") return "CAST(o.amount_cents / 100 AS DECIMAL(18,2))";
  return "printf('%d.%02d', o.amount_cents / 100, o.amount_cents % 100)";
}

std::string ContainsExpression(const std::string& dialect, const std::string& text,
                               const std::string& part) {
  if (dialect == "postgres") return "strpos(" + text + ", " + part + ") &gt; 0";
  return "instr(" + text + ", " + part + ") &gt; 0";
}

std::string Template(const std::string& dialect) {
  return R"SQL(<script>
SELECT o.id AS id, o.order_no AS order_no, o.customer_code AS customer_code,
       o.status AS status, o.channel AS channel,
       )SQL" +
         AmountExpression(dialect) + R"SQL( AS amount,
       o.quantity AS quantity, o.paid AS paid, o.order_date AS order_date,
       o.created_at AS created_at
FROM orders o
<where>
  o.tenant_id = #{tenantId}
  <if test="status != null and status != ''">AND o.status = #{status}</if>
  <if test="channel != null and channel != ''">AND o.channel = #{channel}</if>
  <if test="dateFrom != null and dateFrom != ''">AND o.order_date &gt;= #{dateFrom}</if>
  <if test="dateTo != null and dateTo != ''">AND o.order_date &lt;= #{dateTo}</if>
  <if test="keyword != null and keyword != ''">AND )SQL" +
         ContainsExpression(dialect, "o.order_no", "#{keyword}") + R"SQL(</if>
  <if test="customerCodes != null and customerCodes.size() &gt; 0">
    AND o.customer_code IN
    <foreach collection="customerCodes" item="c" open="(" separator="," close=")">#{c}</foreach>
  </if>
</where>
</script>)SQL";
}

constexpr const char* kEnrichSql = R"SQL(<script>
SELECT customer_code, name AS customer_name FROM customer
WHERE tenant_id = #{tenantId} AND customer_code IN
<foreach collection="keys" item="k" open="(" separator="," close=")">#{k}</foreach>
</script>)SQL";

const char* kStatuses[] = {"NEW", "PAID", "SHIPPED", "DONE", "REFUNDED"};
const char* kChannels[] = {"WEB", "APP", "STORE"};

struct Db {
  sqlite3* db = nullptr;
  explicit Db(const std::string& path, int flags) {
    sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  }
  ~Db() { sqlite3_close_v2(db); }
};

// A read-only connection per server thread, kept open: a connection opened
// per call starts with a cold page cache and reads every page of a thousand
// lookups through pread again. Memory-mapped reads skip the copies. Only its
// own thread uses it, so it opens without SQLite's per-call mutex (a tenth
// of the service's CPU in a million-row callback export's lookups).
sqlite3* ReadConnection(const std::string& path) {
  struct Connections {
    std::map<std::string, sqlite3*> open;
    ~Connections() {
      for (auto& [path, db] : open) sqlite3_close_v2(db);
    }
  };
  thread_local Connections connections;
  auto it = connections.open.find(path);
  if (it != connections.open.end()) return it->second;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    sqlite3_close_v2(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_exec(db, "PRAGMA mmap_size = 1073741824", nullptr, nullptr, nullptr);
  return connections.open.emplace(path, db).first->second;
}

std::string Str(const json& p, const char* k) {
  auto it = p.find(k);
  return it != p.end() && it->is_string() ? it->get<std::string>() : "";
}

class OrderListScenario : public export_center::sdk::SqlScenario {
 public:
  OrderListScenario(std::string path, bool sql_enrich, int64_t version, std::string dialect)
      : path_(std::move(path)),
        sql_enrich_(sql_enrich),
        version_(version),
        template_(Template(dialect)) {}

  std::string QueryId() const override { return sql_enrich_ ? "ORDER_LIST_SQL" : "ORDER_LIST"; }

  Result<export_center::sdk::SqlTemplateResult> GetSqlTemplate(const json& params) override {
    export_center::sdk::SqlTemplateResult r;
    r.sql_template = template_;
    r.columns = {{{"id", "订单ID", ColumnType::kInteger, 10}},
                 {{"order_no", "订单号", ColumnType::kString, 16}},
                 {{"customer_code", "客户编码", ColumnType::kString, 14}, false, true},
                 {{"customer_name", "客户名称", ColumnType::kString, 20}, true, false, false},
                 {{"status", "状态", ColumnType::kString, 10}},
                 {{"channel", "渠道", ColumnType::kString, 8}},
                 {{"amount", "金额", ColumnType::kDecimal, 12, 2, "#,##0.00"}},
                 {{"quantity", "数量", ColumnType::kInteger, 8}},
                 {{"paid", "已支付", ColumnType::kBoolean, 8}},
                 {{"order_date", "下单日期", ColumnType::kDate, 12}},
                 {{"created_at", "创建时间", ColumnType::kDateTime, 20}}};
    r.order_by = "order_date DESC, id";
    r.unique_key = {"id"};
    r.tenant = Str(params, "tenantId");
    r.version = version_;
    r.support_version = true;
    r.support_count_for_list = true;
    if (sql_enrich_) {
      r.enrich_sqls = {{"customer", "customer_code", kEnrichSql, {"customer_name"}}};
    } else {
      r.need_enrich = true;
    }
    return r;
  }

  // The list page's own count, written by hand like a real list query.
  Result<int64_t> CountForList(const json& p) override {
    std::string sql = "SELECT COUNT(*) FROM orders WHERE tenant_id = ?";
    std::vector<std::string> args = {Str(p, "tenantId")};
    auto add = [&](const char* key, const char* cond) {
      if (!Str(p, key).empty()) {
        sql += cond;
        args.push_back(Str(p, key));
      }
    };
    add("status", " AND status = ?");
    add("channel", " AND channel = ?");
    add("dateFrom", " AND order_date >= ?");
    add("dateTo", " AND order_date <= ?");
    add("keyword", " AND instr(order_no, ?) > 0");
    if (auto c = p.find("customerCodes"); c != p.end() && c->is_array() && !c->empty()) {
      sql += " AND customer_code IN (";
      for (size_t i = 0; i < c->size(); ++i) {
        sql += i ? ",?" : "?";
        args.push_back((*c)[i].is_string() ? (*c)[i].get<std::string>() : (*c)[i].dump());
      }
      sql += ")";
    }
    sqlite3* db = ReadConnection(path_);
    sqlite3_stmt* st = nullptr;
    if (db == nullptr || sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      return ProviderError{500, "count failed"};
    }
    for (size_t i = 0; i < args.size(); ++i) {
      sqlite3_bind_text(st, static_cast<int>(i) + 1, args[i].c_str(), -1, SQLITE_TRANSIENT);
    }
    int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (n < 0) return ProviderError{500, "count failed"};
    return n;
  }

  Result<int64_t> GetVersion(const json&) override { return version_; }

  // Callback enrichment: answers aligned with the keys by index.
  Result<std::vector<json>> Enrich(const export_center::sdk::SqlEnrichRequest& req) override {
    sqlite3* db = ReadConnection(path_);
    sqlite3_stmt* st = nullptr;
    if (db == nullptr ||
        sqlite3_prepare_v2(db,
                           "SELECT name FROM customer WHERE tenant_id = ? AND customer_code = ?",
                           -1, &st, nullptr) != SQLITE_OK) {
      sqlite3_finalize(st);
      return ProviderError{503, "customer database unavailable"};
    }
    std::string tenant = Str(req.parameters, "tenantId");
    std::vector<json> out;
    out.reserve(req.keys.size());
    // One read transaction for the page's lookups: in autocommit each would
    // take and drop the file lock and re-check the WAL on its own.
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (const auto& key : req.keys) {
      std::string code = key.is_string() ? key.get<std::string>() : key.dump();
      sqlite3_reset(st);
      sqlite3_bind_text(st, 1, tenant.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(st, 2, code.c_str(), -1, SQLITE_TRANSIENT);
      json extra = json::object();
      if (sqlite3_step(st) == SQLITE_ROW) {
        extra["customer_name"] = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      }
      out.push_back(std::move(extra));
    }
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    return out;
  }

 private:
  std::string path_;
  bool sql_enrich_;
  int64_t version_;
  std::string template_;
};

// The ORDER_LIST query with one filter spliced by ${}: the way many MyBatis
// list queries were written before someone noticed.
std::string SplicedTemplate(const std::string& spliced) {
  std::string condition =
      spliced == "status"
          ? R"(<if test="status != null and status != ''">AND o.status = '${status}'</if>)"
          : R"(<if test="keyword != null and keyword != ''">AND o.order_no LIKE '%${keyword}%'</if>)";
  return R"SQL(<script>
SELECT o.id AS id, o.order_no AS order_no, o.customer_code AS customer_code,
       o.status AS status, o.channel AS channel,
       printf('%d.%02d', o.amount_cents / 100, o.amount_cents % 100) AS amount,
       o.quantity AS quantity, o.paid AS paid, o.order_date AS order_date,
       o.created_at AS created_at
FROM orders o
<where>
  o.tenant_id = #{tenantId}
  )SQL" + condition +
         R"SQL(
</where>
</script>)SQL";
}

class SplicedOrderScenario : public OrderListScenario {
 public:
  SplicedOrderScenario(std::string path, std::string spliced, int64_t version)
      : OrderListScenario(std::move(path), false, version, "sqlite"),
        query_id_("ORDER_LIST_SPLICED_" + std::string(spliced == "status" ? "STATUS" : "KEYWORD")),
        template_(SplicedTemplate(spliced)) {}

  std::string QueryId() const override { return query_id_; }

  Result<export_center::sdk::SqlTemplateResult> GetSqlTemplate(const json& params) override {
    auto r = OrderListScenario::GetSqlTemplate(params);
    if (r.ok()) r.value().sql_template = template_;
    return r;
  }

 private:
  std::string query_id_;
  std::string template_;
};

// ORDER_LIST_RICH (issue 45; docs/sql-template-route.md#column-options): the
// orders of each customer under a two-level header, the customer code merged,
// each order date merged within its customer, the status labelled by the
// contract (in two languages), the channel raw (the definition labels it),
// paid as 是/否, totals on amount and quantity, a highlight over large amounts.
std::string RichTemplate(const std::string& dialect) {
  return R"SQL(<script>
SELECT o.id AS id, o.customer_code AS customer_code, o.order_date AS order_date,
       o.order_no AS order_no, o.status AS status, o.channel AS channel,
       o.paid AS paid, o.quantity AS quantity, )SQL" +
         AmountExpression(dialect) + R"SQL( AS amount
FROM orders o
<where>
  o.tenant_id = #{tenantId}
  <if test="status != null and status != ''">AND o.status = #{status}</if>
</where>
</script>)SQL";
}

class RichOrderScenario : public export_center::sdk::SqlScenario {
 public:
  RichOrderScenario(int64_t version, std::string dialect)
      : version_(version), template_(RichTemplate(dialect)) {}

  std::string QueryId() const override { return "ORDER_LIST_RICH"; }

  Result<export_center::sdk::SqlTemplateResult> GetSqlTemplate(const json& params) override {
    namespace sdk = export_center::sdk;
    sdk::Column code{"customer_code", "客户编码", ColumnType::kString, 14};
    code.title_groups = {"客户"};
    code.merge = sdk::Merge::kSameValue;
    code.style.header_fill = "#DDEBF7";
    sdk::Column day{"order_date", "下单日期", ColumnType::kDate, 12};
    day.title_groups = {"订单"};
    day.merge = sdk::Merge::kSameValue;
    day.merge_within = "customer_code";
    sdk::Column no{"order_no", "订单号", ColumnType::kString, 16};
    no.title_groups = {"订单"};
    sdk::Column status{"status", "状态", ColumnType::kString, 10};
    status.titles_by_language = {{"zh-CN", {"订单", "状态"}}, {"en", {"Order", "Status"}}};
    status.labels = {{"NEW", {"", {{"zh-CN", "新建"}, {"en", "New"}}}},
                     {"PAID", {"", {{"zh-CN", "已支付"}, {"en", "Paid"}}}},
                     {"SHIPPED", {"", {{"zh-CN", "已发货"}, {"en", "Shipped"}}}},
                     {"DONE", {"", {{"zh-CN", "已完成"}, {"en", "Done"}}}},
                     {"REFUNDED", {"", {{"zh-CN", "已退款"}, {"en", "Refunded"}}}}};
    status.label_missing = sdk::LabelMissing::kFail;
    status.style.align = sdk::Align::kCenter;
    sdk::Column channel{"channel", "渠道", ColumnType::kString, 8};
    channel.title_groups = {"订单"};
    sdk::Column paid{"paid", "已支付", ColumnType::kBoolean, 8};
    paid.title_groups = {"订单"};
    paid.labels = {{"true", {"是", {}}}, {"false", {"否", {}}}};
    sdk::Column quantity{"quantity", "数量", ColumnType::kInteger, 8};
    quantity.title_groups = {"金额"};
    quantity.total = sdk::Total::kSum;
    sdk::Column amount{"amount", "金额", ColumnType::kDecimal, 12, 2, "#,##0.00"};
    amount.title_groups = {"金额"};
    amount.total = sdk::Total::kSum;
    amount.style.align = sdk::Align::kRight;
    amount.highlight = {sdk::HighlightOp::kGreater, {"90000"}, "#FFC7CE", "#9C0006"};

    sdk::SqlTemplateResult r;
    r.sql_template = template_;
    for (auto& c : {code, day, no, status, channel, paid, quantity, amount}) {
      r.columns.push_back({c});
    }
    r.order_by = "customer_code, order_date, id";
    r.unique_key = {"id"};
    r.tenant = Str(params, "tenantId");
    r.version = version_;
    r.support_version = true;
    return r;
  }

  Result<int64_t> GetVersion(const json&) override { return version_; }

 private:
  int64_t version_;
  std::string template_;
};

}  // namespace

int64_t SeedOrdersIfEmpty(const std::string& path, int64_t orders, int64_t customers,
                          std::string* error) {
  Db db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const char* schema =
      "CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL,"
      " order_no TEXT NOT NULL, customer_id INTEGER NOT NULL, customer_code TEXT NOT NULL,"
      " status TEXT NOT NULL, channel TEXT NOT NULL, amount_cents INTEGER NOT NULL,"
      " quantity INTEGER NOT NULL, paid INTEGER NOT NULL, order_date TEXT NOT NULL,"
      " created_at INTEGER NOT NULL);"
      // In the list's own order (order_date DESC, id): every page then reads
      // its rows in index order, where an ascending index makes SQLite and
      // PostgreSQL sort each page's ties and MariaDB the whole page.
      "CREATE INDEX IF NOT EXISTS orders_tenant_date ON orders(tenant_id, order_date DESC, id);"
      // Both enrichment modes look customers up by code.
      "CREATE INDEX IF NOT EXISTS customer_code ON customer(customer_code);";
  if (sqlite3_exec(db.db, schema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    *error = std::string("orders schema: ") + sqlite3_errmsg(db.db);
    return -1;
  }
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db.db, "SELECT COUNT(*) FROM orders", -1, &st, nullptr);
  int64_t have = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  if (have > 0 || orders <= 0 || customers <= 0) return 0;
  sqlite3_exec(db.db, "BEGIN", nullptr, nullptr, nullptr);
  sqlite3_prepare_v2(db.db, "INSERT INTO orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st,
                     nullptr);
  const int64_t base_ms = 1704038400000;  // 2024-01-01T00:00:00+08:00
  for (int64_t j = 1; j <= orders; ++j) {
    int64_t customer = (j * 7919) % customers + 1;
    char no[32], code[32], date[32];  // room for any int, so the compiler sees no truncation
    std::snprintf(no, sizeof no, "SO%010lld", static_cast<long long>(j));
    std::snprintf(code, sizeof code, "CUS%08lld", static_cast<long long>(customer));
    int64_t created = base_ms + (j * 104729) % (366LL * 86400000);
    int64_t day = (created - base_ms) / 86400000;  // day of 2024 in UTC+8
    int month = 1, mday = static_cast<int>(day) + 1;
    static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    while (month <= 12 && mday > kDays[month - 1]) mday -= kDays[month++ - 1];
    std::snprintf(date, sizeof date, "2024-%02d-%02d", month, mday);
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, j);
    sqlite3_bind_text(st, 2, (customer - 1) % 5 < 3 ? "1" : "2", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, no, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, customer);
    sqlite3_bind_text(st, 5, code, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 6, kStatuses[(j / 3) % 5], -1,
                      SQLITE_STATIC);  // not in step with the tenant
    sqlite3_bind_text(st, 7, kChannels[j % 3], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, (j * 7717) % 10000000 + 100);
    sqlite3_bind_int64(st, 9, j % 20 + 1);
    sqlite3_bind_int(st, 10, j % 5 != 0);
    sqlite3_bind_text(st, 11, date, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 12, created);
    if (sqlite3_step(st) != SQLITE_DONE) {
      *error = std::string("seeding orders: ") + sqlite3_errmsg(db.db);
      sqlite3_finalize(st);
      sqlite3_exec(db.db, "ROLLBACK", nullptr, nullptr, nullptr);
      return -1;
    }
  }
  sqlite3_finalize(st);
  if (sqlite3_exec(db.db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    *error = std::string("seeding orders: ") + sqlite3_errmsg(db.db);
    return -1;
  }
  // Statistics for the new table and for the lookup index created above on
  // the customers (analysed after their own seeding, before it existed), so
  // the planner chooses by data, not by guess (docs/sql-template-route.md#statistics).
  if (sqlite3_exec(db.db, "ANALYZE orders; ANALYZE customer_code;", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    *error = std::string("analyzing orders: ") + sqlite3_errmsg(db.db);
    return -1;
  }
  return orders;
}

std::shared_ptr<export_center::sdk::SqlScenario> NewOrderListScenario(const std::string& path,
                                                                      bool sql_enrich,
                                                                      int64_t version,
                                                                      const std::string& dialect) {
  return std::make_shared<OrderListScenario>(path, sql_enrich, version, dialect);
}

std::shared_ptr<export_center::sdk::SqlScenario> NewSplicedOrderScenario(const std::string& path,
                                                                         const std::string& spliced,
                                                                         int64_t version) {
  return std::make_shared<SplicedOrderScenario>(path, spliced, version);
}

std::shared_ptr<export_center::sdk::SqlScenario> NewRichOrderScenario(int64_t version,
                                                                      const std::string& dialect) {
  return std::make_shared<RichOrderScenario>(version, dialect);
}

}  // namespace customer_service
