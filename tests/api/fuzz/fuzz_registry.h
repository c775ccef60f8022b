#pragma once
// The export types the api fuzzers run against: one of each parameter type,
// an `allowed` list, a required parameter, a permission, a merchant-only and a
// disabled type, so every branch of the create-request checks is reachable.

#include <string>
#include <utility>
#include <vector>

#include "registry/registry.h"
#include "task/task.h"

namespace export_center::api::fuzz {

inline registry::ParameterSpec Param(std::string name, std::string type = "STRING",
                                     std::vector<std::string> allowed = {}, bool required = false) {
  return {std::move(name), std::move(type), "", required, std::move(allowed)};
}

inline registry::RegistrySnapshot FuzzSnapshot() {
  registry::RegistrySnapshot s;
  registry::ExportDefinition customers;
  customers.name = "CUSTOMER_LIST";
  customers.title = "客户列表";
  customers.service = "customer-service";
  customers.required_permission = "customer:export";
  customers.parameters = {Param("keyword"),
                          Param("status", "STRING", {"ACTIVE", "INACTIVE"}),
                          Param("minOrders", "INTEGER"),
                          Param("vip", "BOOLEAN"),
                          Param("from", "DATE"),
                          Param("tags", "STRING_LIST", {"a", "b", "c"}),
                          Param("filter", "OBJECT")};
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.title = "订单列表";
  orders.parameters = {Param("day", "DATE", {}, /*required=*/true), Param("ids", "STRING_LIST")};
  registry::ExportDefinition merchant;
  merchant.name = "MERCHANT_ORDERS";
  merchant.title = "Merchant orders";
  merchant.app_scope = task::AppCode::kMerchant;
  registry::ExportDefinition old;
  old.name = "OLD_TYPE";
  old.enabled = false;
  for (auto* d : {&customers, &orders, &merchant, &old}) s.definitions[d->name] = *d;
  return s;
}

}  // namespace export_center::api::fuzz
