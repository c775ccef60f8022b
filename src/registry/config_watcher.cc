#include "registry/config_watcher.h"

#include <spdlog/spdlog.h>

#include <system_error>

namespace export_center::registry {

ConfigWatcher::ConfigWatcher(Registry* registry, std::string config_path,
                             std::chrono::milliseconds interval, Callback on_reload)
    : registry_(registry),
      path_(std::move(config_path)),
      interval_(interval),
      on_reload_(std::move(on_reload)),
      worker_({"config_watcher", interval_, PeriodicWorker::FirstRound::kAfterWait}, [this] {
        Round();
        return PeriodicWorker::Next::Interval();
      }) {
  if (!on_reload_) {
    on_reload_ = [path = path_](const Status& status) {
      if (status.ok()) {
        spdlog::info("export-type registry reloaded from {}", path);
      } else {
        spdlog::error("export-type registry reload failed, keeping the old set: {}",
                      status.ToString());
      }
    };
  }
}

ConfigWatcher::~ConfigWatcher() { Stop(); }

void ConfigWatcher::Start() {
  if (worker_.Running()) return;
  last_ = Observe();
  worker_.Start();
}

void ConfigWatcher::Stop() { worker_.Stop(); }

ConfigWatcher::FileState ConfigWatcher::Observe() const {
  // error_code overloads: a file briefly missing during an editor's
  // save-by-rename is not an exception, just a state.
  std::error_code ec;
  FileState state;
  state.mtime = std::filesystem::last_write_time(path_, ec);
  if (ec) return state;
  state.size = std::filesystem::file_size(path_, ec);
  state.exists = !ec;
  return state;
}

void ConfigWatcher::Round() {
  FileState now = Observe();
  // A vanished file is most likely mid-replace; wait for it to reappear.
  if (now.exists && !(now == last_)) {
    last_ = now;
    on_reload_(registry_->Reload(path_));
  } else if (!now.exists) {
    last_ = now;
  }
}

}  // namespace export_center::registry
