#pragma once
// OrderLinesProvider: serves ORDER_LINES, the rich-column showcase of the
// provider route (issue 45; docs/provider-contract.md#column-options).
//
// One row per order line of the tenant's orders, in order id, then line
// order. The lines are derived from the `orders` table, deterministically:
// order j has 1 + j % 3 lines; line k's quantity is 1 + (j + k) % 4 and its
// amount an equal share of the order's amount_cents (the last line takes the
// remainder), so the lines of an order sum to its amount. The columns: a
// two-level header (订单 / 明细), the order number merged, the order date and
// the status merged within the order number, the status labelled in two
// languages (labelMissing FAIL), the channel raw (the center's definition labels it),
// totals on quantity and amount, a highlight over large line amounts.
// Cursor = the last order id of the batch; snapshotToken = signed max order id.

#include <memory>
#include <string>
#include <vector>

#include "sdk/provider_server.h"

namespace customer_service {

class OrderLinesProvider : public export_center::sdk::BatchProvider {
 public:
  OrderLinesProvider(std::string sqlite_path, std::string snapshot_secret);

  // BatchProvider:
  std::string ExportType() const override { return "ORDER_LINES"; }
  std::vector<export_center::sdk::Column> Columns() const override;
  export_center::sdk::Result<export_center::sdk::BatchResponse> Fetch(
      const export_center::sdk::BatchRequest& request) override;

 private:
  std::string path_;
  export_center::sdk::SnapshotSigner signer_;
};

}  // namespace customer_service
