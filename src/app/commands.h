#pragma once
// Long-running subcommands and their helpers.

#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace export_center::app {

struct TokenOptions {
  std::string user;
  std::string tenant;
  std::string app = "PLATFORM";
  std::vector<std::string> perms;
  int ttl_seconds = 86400;
};

StatusOr<std::string> MintDevToken(const config::AppConfig& config, const TokenOptions& options);

// Serves until SIGINT/SIGTERM; SIGHUP reloads the registry. Returns the exit code.
int RunServe(const std::string& config_path);

// Starts the customer service (child process) and the center, creates a
// CUSTOMER_LIST export through the HTTP API, waits for it, prints the file
// path, the download URL and a dev token, and serves until interrupted.
int RunDemo(const std::string& config_path);

// `storage list`: one line per object under exports/ of the configured
// storage, "KEY<TAB>SIZE<TAB>complete", then one per partial file or
// incomplete multipart upload, "NAME<TAB>SIZE|-<TAB>partial"; a count on
// stderr. Returns the exit code (2 when the storage cannot be listed).
int RunStorageList(const std::string& config_path);

}  // namespace export_center::app
