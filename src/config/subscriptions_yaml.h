#pragma once
// Private to config/: the `subscriptions:` section
// (docs/configuration.md#subscriptions) onto subscription::SubscriptionOptions.

#include "config/yaml_reader.h"
#include "subscription/subscription_options.h"

namespace export_center::config {

// Reads values and per-field ranges, through r's environment overlay.
void ReadSubscriptions(MapReader& r, subscription::SubscriptionOptions* c);

}  // namespace export_center::config
