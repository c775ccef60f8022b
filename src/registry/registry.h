#pragma once
// Registry: the export types and provider services in force
// (docs/configuration.md#export-type-registry-hot-reloaded).
//
// Loaded from the `provider-services` and `definitions` sections of the YAML
// config and validated in full by config/registry_yaml.h; an
// invalid file fails start-up with messages naming each key path. Reload()
// swaps the whole set atomically or, if the new file is invalid, keeps the old
// set and returns the error. Readers take a snapshot (shared_ptr) and keep it
// for one request or one attempt. Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "registry/export_definition.h"

namespace export_center::registry {

struct RegistrySnapshot {
  std::map<std::string, ProviderService> services;
  std::map<std::string, ExportDefinition> definitions;

  const ExportDefinition* Find(const std::string& type) const;
  const ProviderService* FindService(const std::string& name) const;
};

// The placeholders a definition's file-name-pattern may use.
//   {taskName} {exportType} {taskId} {date} = yyyyMMdd  {time} = HHmmss
// Date and time are taken in the definition's timezone.
struct FileNameVars {
  std::string task_name;
  std::string export_type;
  int64_t task_id = 0;
  int64_t epoch_ms = 0;  // usually the task's created_at
};
// Expands `def.file_name_pattern` (without extension). Never fails: an
// unknown placeholder cannot get past validation; should one appear it is
// kept literally.
std::string ExpandFileName(const ExportDefinition& def, const FileNameVars& vars);
// The placeholder names ExpandFileName knows, for validating patterns.
const std::vector<std::string>& FileNamePlaceholders();

// Reads the registry anew for Reload, given the config file's path. app/
// passes one that validates the whole file (config::LoadRegistryForReload);
// its error is what Reload returns.
using SnapshotLoader = std::function<StatusOr<RegistrySnapshot>(const std::string& config_path)>;

// The error of a refused reload: InvalidArgument "reload of PATH refused,
// keeping the current export types:" and then the message of every failed
// status in `problems`, one problem per line. OK when none failed.
Status ReloadRefused(const std::string& config_path, const std::vector<Status>& problems);

class Registry {
 public:
  // `load` reads the file on Reload; without one Reload fails.
  explicit Registry(RegistrySnapshot initial, SnapshotLoader load = nullptr);
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  std::shared_ptr<const RegistrySnapshot> Current() const EXCLUDES(mu_);
  // Loads `config_path` with the loader (which validates the WHOLE file, so
  // a file that would fail the next start-up is refused now), and swaps in
  // its definitions. provider-services is a deploy-time allow-list: if the
  // file's set differs from the current one the reload is refused. On any
  // error keeps the old set and returns InvalidArgument (or NotFound for a
  // missing file) listing every problem. Thread-safe.
  Status Reload(const std::string& config_path) EXCLUDES(mu_);

 private:
  const SnapshotLoader load_;
  mutable Mutex mu_;
  std::shared_ptr<const RegistrySnapshot> current_ GUARDED_BY(mu_);
};

}  // namespace export_center::registry
