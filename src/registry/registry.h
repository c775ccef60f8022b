#pragma once
// Registry: the export types and provider services in force (SPEC §6).
//
// Loaded from the `provider-services` and `definitions` sections of the YAML
// config and validated in full (seed 000 §10.3); an invalid file fails
// start-up with messages naming each key path. Reload() swaps the whole set
// atomically or, if the new file is invalid, keeps the old set and returns the
// error. Readers take a snapshot (shared_ptr) and keep it for one request or
// one attempt. Thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <yaml-cpp/yaml.h>

#include "common/status.h"
#include "registry/export_definition.h"

namespace export_center::registry {

struct RegistrySnapshot {
  std::map<std::string, ProviderService> services;
  std::map<std::string, ExportDefinition> definitions;

  const ExportDefinition* Find(const std::string& type) const;
  const ProviderService* FindService(const std::string& name) const;
};

// Parses and validates the two sections from a YAML root node. All problems are
// reported together, one per line, each with its key path, e.g.
// "definitions.CUSTOMER_LIST.batch-size: 20 is out of range [50, 1000]".
StatusOr<RegistrySnapshot> ParseRegistry(const YAML::Node& root);

class Registry {
 public:
  explicit Registry(RegistrySnapshot initial);
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  std::shared_ptr<const RegistrySnapshot> Current() const;
  // Loads `config_path`, validates, swaps. On error keeps the old set.
  Status Reload(const std::string& config_path);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const RegistrySnapshot> current_;  // GUARDED_BY(mu_)
};

}  // namespace export_center::registry
