#pragma once
// The SQL SubscriptionLedger (subscription_ledger.h) over any Database: one
// small class of its own, not another role of SqlTaskStore.

#include <memory>

#include "store/database.h"
#include "store/subscription_ledger.h"

namespace export_center::store {

std::unique_ptr<SubscriptionLedger> NewSqlSubscriptionLedger(std::shared_ptr<Database> db);

}  // namespace export_center::store
