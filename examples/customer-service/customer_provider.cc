#include "customer_provider.h"

#include <cstdio>

namespace customer_service {
namespace {

namespace sdk = export_center::sdk;
using sdk::ColumnType;
using sdk::ProviderError;

constexpr size_t kMaxKeywordChars = 64;

size_t Utf8Chars(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Reads an optional string parameter; a non-string is the caller's mistake.
bool StringParam(const nlohmann::json& params, const char* name, std::optional<std::string>* out) {
  auto it = params.find(name);
  if (it == params.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  if (!it->get_ref<const std::string&>().empty()) *out = it->get<std::string>();
  return true;
}

sdk::Result<CustomerFilter> FilterOf(const sdk::BatchRequest& request) {
  CustomerFilter f;
  f.tenant_id = request.tenant_id;  // never from parameters
  if (!StringParam(request.parameters, "keyword", &f.keyword) ||
      (f.keyword && Utf8Chars(*f.keyword) > kMaxKeywordChars)) {
    return ProviderError{400, "keyword must be a string of at most 64 characters"};
  }
  if (!StringParam(request.parameters, "status", &f.status) ||
      (f.status && *f.status != "ACTIVE" && *f.status != "INACTIVE" && *f.status != "FROZEN")) {
    return ProviderError{400, "status must be ACTIVE, INACTIVE or FROZEN"};
  }
  return f;
}

}  // namespace

CustomerListProvider::CustomerListProvider(CustomerDb* db, std::string snapshot_secret)
    : db_(db), signer_(std::move(snapshot_secret)) {}

std::vector<sdk::Column> CustomerListProvider::Columns() const {
  return {
      {"id", "客户ID", ColumnType::kInteger, 20, 0, ""},
      {"customerCode", "客户编码", ColumnType::kString, 14, 0, ""},
      {"customerName", "公司名称", ColumnType::kString, 28, 0, ""},
      {"status", "状态", ColumnType::kString, 10, 0, ""},
      {"balance", "账户余额", ColumnType::kDecimal, 16, 2, "#,##0.00"},
      {"creditLimit", "信用额度", ColumnType::kInteger, 14, 0, ""},
      {"vip", "VIP", ColumnType::kBoolean, 8, 0, ""},
      {"registeredOn", "注册日期", ColumnType::kDate, 12, 0, ""},
      {"lastOrderAt", "最近下单时间", ColumnType::kDateTime, 20, 0, ""},
      {"remarks", "备注", ColumnType::kString, 30, 0, ""},
  };
}

void WriteCustomerRow(const Customer& c, sdk::RowWriter* rows) {
  rows->Row()
      .Integer(c.id)
      .String(c.customer_code)
      .String(c.name)
      .String(c.status)
      .Decimal(c.balance_cents, 2)
      .Integer(c.credit_limit)
      .Boolean(c.vip)
      .String(c.registered_on)  // stored as yyyy-MM-dd, the wire form of a DATE
      .DateTime(c.last_order_at)
      .String(c.remarks);
}

sdk::Result<sdk::BatchResponse> CustomerListProvider::Fetch(const sdk::BatchRequest& request) {
  // CUSTOMER_LIST is a platform export; a merchant must never list all
  // customers of a tenant.
  if (request.app_code != "PLATFORM") {
    return ProviderError{403, "CUSTOMER_LIST is available to PLATFORM only"};
  }
  auto filter = FilterOf(request);
  if (!filter.ok()) return filter.error();
  auto after_id = sdk::ParseIdCursor(request.cursor);
  if (!after_id) return ProviderError{400, "cursor is not a customer id"};

  sdk::BatchResponse response;
  int64_t max_id;
  if (!request.snapshot_token) {
    max_id = db_->MaxId();
    if (max_id < 0) return ProviderError{503, "customer database unavailable"};
    response.snapshot_token = signer_.Sign(request, max_id);
    int64_t total = db_->Count(filter.value(), max_id);
    if (total >= 0) response.total_rows = total;
  } else {
    auto verified = signer_.Verify(request, *request.snapshot_token);
    if (!verified) return ProviderError{400, "snapshotToken is invalid or belongs to another task"};
    max_id = *verified;
  }

  std::vector<Customer> customers;
  std::string error;
  // One extra row tells whether another batch follows.
  if (!db_->Page(filter.value(), *after_id, max_id, request.limit + 1, &customers, &error)) {
    return ProviderError{503, "customer database unavailable"};
  }
  response.has_more = customers.size() > static_cast<size_t>(request.limit);
  if (response.has_more) customers.pop_back();
  sdk::RowWriter rows(Columns());
  for (const auto& c : customers) WriteCustomerRow(c, &rows);
  response.written = std::move(rows);
  if (response.has_more) response.next_cursor = sdk::IdCursor(customers.back().id);
  return response;
}

}  // namespace customer_service
