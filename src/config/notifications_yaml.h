#pragma once
// Private to config/: the `notifications:` section (docs/notifications.md,
// docs/configuration.md#notifications) onto notify::NotificationOptions.

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "config/yaml_reader.h"
#include "notify/notification_options.h"

namespace export_center::config {

// Reads values and per-field ranges, through r's environment overlay (a
// receiver's secret also from EXPORT_CENTER_WEBHOOK_SECRET_<ID>).
void ReadNotifications(MapReader& r, notify::NotificationOptions* c);

// Cross-field checks: every receiver URL's host:port is in allowed-targets
// (refused with the key path otherwise), secrets present and long enough,
// export types defined under `definitions` of `root`, timeouts within the lease.
void CheckNotifications(const notify::NotificationOptions& c, const YAML::Node& root,
                        ErrorList* errors);

}  // namespace export_center::config
