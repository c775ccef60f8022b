#pragma once
// CustomerListProvider: serves the CUSTOMER_LIST export type.
//
// Parameters: keyword (substring of company name or customer code) and
// status (ACTIVE | INACTIVE | FROZEN). The tenant always comes from the
// request, never from parameters. Cursor = last id; snapshotToken = signed
// max id taken at the first batch, so customers created during the export
// never appear (updates and deletes are not frozen:
// docs/provider-contract.md#snapshot-guarantee).

#include <memory>
#include <string>
#include <vector>

#include "customer_db.h"
#include "sdk/provider_server.h"

namespace customer_service {

class CustomerListProvider : public export_center::sdk::BatchProvider {
 public:
  CustomerListProvider(CustomerDb* db, std::string snapshot_secret);

  // BatchProvider:
  std::string ExportType() const override { return "CUSTOMER_LIST"; }
  std::vector<export_center::sdk::Column> Columns() const override;
  export_center::sdk::Result<export_center::sdk::BatchResponse> Fetch(
      const export_center::sdk::BatchRequest& request) override;

 private:
  CustomerDb* db_;  // not owned
  export_center::sdk::SnapshotSigner signer_;
};

// One customer as the next wire row, cells in Columns() order.
void WriteCustomerRow(const Customer& c, export_center::sdk::RowWriter* rows);

}  // namespace customer_service
