#pragma once
// ConfigWatcher: hot reload of the export-type registry on file change
// (docs/configuration.md#reload). SIGHUP is wired by app/, which simply calls Registry::Reload.
//
// Polls the config file's modification time and size every `interval` on its
// own thread; when either changes (including an atomic rename or a symlink
// swap, as Kubernetes ConfigMaps do) it calls Registry::Reload and hands the
// result to `on_reload`. An invalid file keeps the old definitions; the next
// change is tried again. Start/Stop may be called from any one thread; the
// callback runs on the watcher thread.

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "common/periodic_worker.h"
#include "common/status.h"
#include "registry/registry.h"

namespace export_center::registry {

class ConfigWatcher {
 public:
  // Called after every reload attempt with its result.
  using Callback = std::function<void(const Status&)>;

  // `registry` must outlive the watcher. A null `on_reload` logs the result
  // with spdlog (info on success, error with every problem on failure).
  ConfigWatcher(Registry* registry, std::string config_path, std::chrono::milliseconds interval,
                Callback on_reload = nullptr);
  ~ConfigWatcher();  // calls Stop()
  ConfigWatcher(const ConfigWatcher&) = delete;
  ConfigWatcher& operator=(const ConfigWatcher&) = delete;

  // Records the file's current state (not reloaded) and starts polling.
  void Start();
  // Stops and joins the thread; idempotent.
  void Stop();

 private:
  struct FileState {
    std::filesystem::file_time_type mtime{};
    std::uintmax_t size = 0;
    bool exists = false;
    bool operator==(const FileState&) const = default;
  };
  FileState Observe() const;
  // Reloads when the file changed since the last round.
  void Round();

  Registry* registry_;
  const std::string path_;
  const std::chrono::milliseconds interval_;
  Callback on_reload_;
  FileState last_;         // watcher thread only after Start()
  PeriodicWorker worker_;  // Round every interval, the first one interval after Start()
};

}  // namespace export_center::registry
