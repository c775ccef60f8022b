#pragma once
// Private to config/: the `mail:` section (docs/configuration.md#mail) onto
// notify::mail::MailOptions.

#include <yaml-cpp/yaml.h>

#include "config/yaml_reader.h"
#include "notify/mail/mail_options.h"
#include "subscription/delivery_options.h"

namespace export_center::config {

// Reads values and per-field ranges, through r's environment overlay
// (mail.password also from EXPORT_CENTER_MAIL_PASSWORD).
void ReadMail(MapReader& r, notify::mail::MailOptions* c);

// Cross-field checks, each naming its key path: host, from and at least one
// allowed domain when enabled; tls none only for a loopback host; a username
// with a password; the CA file readable; the timeouts within the lease.
// The delivery block of `subscriptions:` (docs/configuration.md#subscriptions):
// failure-grace-period-minutes, link-ttl-minutes, attach, delivery-poll-interval-ms.
// Reads only its keys (no Finish): the section's reader calls it.
void ReadSubscriptionDelivery(MapReader& r, subscription::DeliveryOptions* c);

void CheckMail(const notify::mail::MailOptions& c, ErrorList* errors);

}  // namespace export_center::config
