#pragma once
// The MailOutbox (mail_outbox.h) on the export_mail table, in the same
// portable SQL as the other store roles (docs/store.md#dialect-tokens): one
// small class of its own over a LeasedQueue, like the notification outbox.

#include <memory>

#include "store/database.h"
#include "store/mail_outbox.h"

namespace export_center::store {

std::unique_ptr<MailOutbox> NewSqlMailOutbox(std::shared_ptr<Database> db);

}  // namespace export_center::store
