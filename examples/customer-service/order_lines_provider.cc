#include "order_lines_provider.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>

namespace customer_service {
namespace {

namespace sdk = export_center::sdk;
using sdk::ColumnType;
using sdk::ProviderError;

constexpr int kMaxLinesPerOrder = 3;

struct Order {
  int64_t id = 0;
  std::string order_no;
  std::string order_date;
  std::string status;
  std::string channel;
  int64_t amount_cents = 0;
};

// A read-only connection for one call.
struct ReadOnly {
  sqlite3* db = nullptr;
  explicit ReadOnly(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      sqlite3_close_v2(db);
      db = nullptr;
    } else {
      sqlite3_busy_timeout(db, 5000);
    }
  }
  ~ReadOnly() { sqlite3_close_v2(db); }
};

std::string Text(sqlite3_stmt* st, int i) {
  const unsigned char* t = sqlite3_column_text(st, i);
  return t == nullptr ? std::string() : reinterpret_cast<const char*>(t);
}

// The orders of `tenant` after `after_id` up to `max_id`, at most `limit`.
bool ReadOrders(sqlite3* db, const std::string& tenant, int64_t after_id, int64_t max_id, int limit,
                std::vector<Order>* out) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT id, order_no, order_date, status, channel, amount_cents"
                         " FROM orders WHERE tenant_id = ? AND id > ? AND id <= ?"
                         " ORDER BY id LIMIT ?",
                         -1, &st, nullptr) != SQLITE_OK) {
    return false;
  }
  sqlite3_bind_text(st, 1, tenant.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 2, after_id);
  sqlite3_bind_int64(st, 3, max_id);
  sqlite3_bind_int(st, 4, limit);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    out->push_back({sqlite3_column_int64(st, 0), Text(st, 1), Text(st, 2), Text(st, 3), Text(st, 4),
                    sqlite3_column_int64(st, 5)});
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE;
}

int64_t MaxOrderId(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(id), 0) FROM orders", -1, &st, nullptr) !=
      SQLITE_OK) {
    return -1;
  }
  int64_t id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return id;
}

sdk::Text Localized(const char* zh, const char* en) { return {"", {{"zh-CN", zh}, {"en", en}}}; }

}  // namespace

OrderLinesProvider::OrderLinesProvider(std::string sqlite_path, std::string snapshot_secret)
    : path_(std::move(sqlite_path)), signer_(std::move(snapshot_secret)) {}

std::vector<sdk::Column> OrderLinesProvider::Columns() const {
  sdk::Column no{"orderNo", "订单号", ColumnType::kString, 16};
  no.title_groups = {"订单"};
  no.merge = sdk::Merge::kSameValue;
  no.style.header_fill = "#DDEBF7";
  sdk::Column day{"orderDate", "下单日期", ColumnType::kDate, 12};
  day.title_groups = {"订单"};
  day.merge = sdk::Merge::kSameValue;
  day.merge_within = "orderNo";
  day.style.header_fill = "#DDEBF7";
  sdk::Column status{"status", "状态", ColumnType::kString, 10};
  status.titles_by_language = {{"zh-CN", {"订单", "状态"}}, {"en", {"Order", "Status"}}};
  status.labels = {{"NEW", Localized("新建", "New")},
                   {"PAID", Localized("已支付", "Paid")},
                   {"SHIPPED", Localized("已发货", "Shipped")},
                   {"DONE", Localized("已完成", "Done")},
                   {"REFUNDED", Localized("已退款", "Refunded")}};
  status.label_missing = sdk::LabelMissing::kFail;
  status.merge = sdk::Merge::kSameValue;  // an order's lines share its status
  status.merge_within = "orderNo";
  status.style = {"#DDEBF7", "", sdk::Align::kCenter, false};
  sdk::Column channel{"channel", "渠道", ColumnType::kString, 8};  // one level: merged down
  sdk::Column line{"lineNo", "行号", ColumnType::kInteger, 6};
  line.title_groups = {"明细"};
  sdk::Column sku{"sku", "商品", ColumnType::kString, 12};
  sku.title_groups = {"明细"};
  sdk::Column quantity{"quantity", "数量", ColumnType::kInteger, 8};
  quantity.title_groups = {"明细"};
  quantity.total = sdk::Total::kSum;
  sdk::Column amount{"amount", "金额", ColumnType::kDecimal, 12, 2, "#,##0.00"};
  amount.title_groups = {"明细"};
  amount.total = sdk::Total::kSum;
  amount.style = {"#FCE4D6", "#9C0006", sdk::Align::kRight, false};
  amount.highlight = {sdk::HighlightOp::kGreater, {"30000"}, "#FFC7CE", "#9C0006"};
  return {no, day, status, channel, line, sku, quantity, amount};
}

sdk::Result<sdk::BatchResponse> OrderLinesProvider::Fetch(const sdk::BatchRequest& request) {
  auto after_id = sdk::ParseIdCursor(request.cursor);
  if (!after_id) return ProviderError{400, "cursor is not an order id"};
  ReadOnly conn(path_);
  if (conn.db == nullptr) return ProviderError{503, "order database unavailable"};
  sdk::BatchResponse response;
  int64_t max_id;
  if (!request.snapshot_token) {
    max_id = MaxOrderId(conn.db);
    if (max_id < 0) return ProviderError{503, "order database unavailable"};
    response.snapshot_token = signer_.Sign(request, max_id);
  } else {
    auto verified = signer_.Verify(request, *request.snapshot_token);
    if (!verified) return ProviderError{400, "snapshotToken is invalid or belongs to another task"};
    max_id = *verified;
  }
  // Whole orders only, never more lines than the limit; one more order tells
  // whether another batch follows.
  const int orders_per_batch = std::max(1, request.limit / kMaxLinesPerOrder);
  std::vector<Order> orders;
  if (!ReadOrders(conn.db, request.tenant_id, *after_id, max_id, orders_per_batch + 1, &orders)) {
    return ProviderError{503, "order database unavailable"};
  }
  response.has_more = orders.size() > static_cast<size_t>(orders_per_batch);
  if (response.has_more) orders.pop_back();
  sdk::RowWriter rows(Columns());
  for (const Order& o : orders) {
    const int lines = 1 + static_cast<int>(o.id % kMaxLinesPerOrder);
    const int64_t share = o.amount_cents / lines;
    int y = 0, m = 0, d = 0;
    std::sscanf(o.order_date.c_str(), "%d-%d-%d", &y, &m, &d);
    for (int k = 1; k <= lines; ++k) {
      char sku[32];
      std::snprintf(sku, sizeof sku, "SKU-%03lld",
                    static_cast<long long>((o.id * 31 + k * 7) % 500));
      const int64_t cents = k < lines ? share : o.amount_cents - share * (lines - 1);
      rows.Row()
          .String(o.order_no)
          .Date(y, m, d)
          .String(o.status)
          .String(o.channel)
          .Integer(k)
          .String(sku)
          .Integer(1 + (o.id + k) % 4)
          .Decimal(cents, 2);
    }
  }
  response.written = std::move(rows);
  if (response.has_more) response.next_cursor = sdk::IdCursor(orders.back().id);
  return response;
}

}  // namespace customer_service
