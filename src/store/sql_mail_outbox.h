#pragma once
// The MailOutbox (mail_outbox.h) on the export_mail table, in the same
// portable SQL as the other store roles (docs/store.md#dialect-tokens): one
// small class of its own over a LeasedQueue, like the notification outbox.

#include <memory>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/mail_outbox.h"

namespace export_center::store {

std::unique_ptr<MailOutbox> NewSqlMailOutbox(std::shared_ptr<Database> db);

// The two statements of the outbox that read long tables of finished rows,
// as it runs them (unexpanded SQL and sample parameters), for the plan check
// of tests/store/mail_outbox_contract_test.cc: the console's dead list
// (index (status, updated_at, id)) and the purge's pick of old DELIVERED
// rows (index (status, delivered_at, id)), migration 21.
struct MailPlanStatement {
  std::string name{};
  std::string sql{};
  SqlParams params{};
};
std::vector<MailPlanStatement> MailOutboxPlanStatements();

}  // namespace export_center::store
