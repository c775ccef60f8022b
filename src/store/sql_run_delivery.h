#pragma once
// The SQL RunDeliveryLedger (run_delivery.h) over any Database: the delivery
// columns of export_subscription_run and export_subscription (migration 21).

#include <memory>

#include "store/database.h"
#include "store/run_delivery.h"

namespace export_center::store {

std::unique_ptr<RunDeliveryLedger> NewSqlRunDeliveryLedger(std::shared_ptr<Database> db);

}  // namespace export_center::store
