#pragma once
// ExportCenterApp: one `export-center serve` process — API, outbox publisher,
// consumers, reconciler and DLQ handler wired to the configured backends.
//
// Start() migrates the schema, checks the guard row, binds the HTTP port and
// starts every enabled component; Stop() stops taking work, gives running
// exports their grace period, and stops the rest. Not copyable.

#include <memory>
#include <string>

#include "common/status.h"
#include "config/config.h"
#include "http/http_server.h"

namespace export_center::app {

class ExportCenterApp {
 public:
  static StatusOr<std::unique_ptr<ExportCenterApp>> Create(config::AppConfig config);
  ~ExportCenterApp();
  ExportCenterApp(const ExportCenterApp&) = delete;
  ExportCenterApp& operator=(const ExportCenterApp&) = delete;

  Status Start();
  void Stop();
  // Re-reads the registry sections of the config file (SIGHUP).
  Status ReloadRegistry();

  int port() const { return port_; }
  // Absolute path of a SUCCEEDED task's file in local storage ("" otherwise).
  std::string FilePathOf(const std::string& task_id) const;
  const config::AppConfig& config() const { return config_; }

 private:
  struct Components;
  // Refreshes the database-derived gauges, then renders Prometheus text.
  std::string MetricsText();
  explicit ExportCenterApp(config::AppConfig config);

  config::AppConfig config_;
  std::unique_ptr<Components> c_;
  std::unique_ptr<http::HttpServer> http_;
  int port_ = 0;
  bool started_ = false;
};

}  // namespace export_center::app
