#pragma once
// ORDER_LIST: the sample service's sql-template scenarios (docs/sql-template-route.md).
//
//   orders(id, tenant_id, order_no, customer_id, customer_code, status,
//          channel, amount_cents, quantity, paid, order_date, created_at)
//
// SeedOrdersIfEmpty fills `orders` deterministically (order j belongs to
// customer (j*7919) % customers + 1 and that customer's tenant).
// Two scenarios share one template with dynamic filters (status, channel,
// dateFrom, dateTo, keyword, customerCodes) and differ in how the enriched
// column customer_name is filled: ORDER_LIST by callback (Enrich looks the
// names up here), ORDER_LIST_SQL by an enrich SQL the center runs.

#include <cstdint>
#include <memory>
#include <string>

#include "sdk/sql_scenario.h"

namespace customer_service {

// Returns the number of orders inserted (0 when present), or -1 with *error.
int64_t SeedOrdersIfEmpty(const std::string& sqlite_path, int64_t orders, int64_t customers,
                          std::string* error);

// `sqlite_path` is the service's database; each scenario opens its own
// read-only connections. `version` is the contract version it reports.
// `dialect` (sqlite | postgres | mysql) is the replica's, for which the
// template is written; the replica holds a copy of `orders` and `customer`.
std::shared_ptr<export_center::sdk::SqlScenario> NewOrderListScenario(
    const std::string& sqlite_path, bool sql_enrich, int64_t version,
    const std::string& dialect = "sqlite");

// ORDER_LIST_SPLICED_STATUS / ORDER_LIST_SPLICED_KEYWORD: the ORDER_LIST
// contract with a legacy template that splices one filter into the SQL with
// `${}` instead of binding it with `#{}` (docs/sql-template.md#what--may-read).
// `spliced` is "status" (an allowed-list parameter: the center renders it) or
// "keyword" (free text: the center refuses the contract, UNSAFE_TEMPLATE).
std::shared_ptr<export_center::sdk::SqlScenario> NewSplicedOrderScenario(
    const std::string& sqlite_path, const std::string& spliced, int64_t version);

// ORDER_LIST_RICH: the rich-column showcase of the sql-template route (a
// two-level header, merged customer codes and dates, labels in two languages,
// totals, a highlight; docs/sql-template-route.md#column-options). The
// template is written for `dialect`, like ORDER_LIST's.
std::shared_ptr<export_center::sdk::SqlScenario> NewRichOrderScenario(
    int64_t version, const std::string& dialect = "sqlite");

}  // namespace customer_service
