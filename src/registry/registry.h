#pragma once
// Registry: the export types and provider services in force (SPEC §6).
//
// Loaded from the `provider-services` and `definitions` sections of the YAML
// config and validated in full (seed 000 §10.3); an invalid file fails
// start-up with messages naming each key path. Reload() swaps the whole set
// atomically or, if the new file is invalid, keeps the old set and returns the
// error. Readers take a snapshot (shared_ptr) and keep it for one request or
// one attempt. Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

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

// What checking a definition's `template-file` needs to know about an XLSX
// template: the `{name}` single values it uses and the built-ins every
// template may use. app/ supplies the inspector from render/, so registry/
// does not depend on the writers.
struct TemplateInfo {
  std::vector<std::string> single_values;
  std::vector<std::string> builtins;
};
// Reads template bytes. InvalidArgument, clearly worded, when the writers
// could not fill them.
using TemplateInspector = std::function<StatusOr<TemplateInfo>(std::string_view template_bytes)>;

// Parses and validates the two sections from a YAML root node. All problems are
// reported together, one per line, each with its key path, e.g.
// "definitions.CUSTOMER_LIST.batch-size: 20 is out of range; allowed: [50, 1000]".
// Definitions naming a `datasource` are checked against the keys of the
// root's `datasources` section. A provider service's internal-token is
// overridden by the env var EXPORT_CENTER_PROVIDER_TOKEN_<NAME_UPPER_SNAKE>
// (customer-service -> EXPORT_CENTER_PROVIDER_TOKEN_CUSTOMER_SERVICE).
// `inspect_template` checks each `template-file`; when empty, a definition
// naming one is reported as a problem.
StatusOr<RegistrySnapshot> ParseRegistry(const YAML::Node& root,
                                         const TemplateInspector& inspect_template);

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

class Registry {
 public:
  // `inspect_template` is handed to ParseRegistry on every Reload.
  explicit Registry(RegistrySnapshot initial, TemplateInspector inspect_template = nullptr);
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  std::shared_ptr<const RegistrySnapshot> Current() const;
  // Loads `config_path`, validates the WHOLE file (config::ParseConfig plus
  // ParseRegistry, so a file that would fail the next start-up is refused
  // now), and swaps in its definitions. provider-services is a deploy-time
  // allow-list: if the file's set differs from the current one the reload is
  // refused. On any error keeps the old set and returns InvalidArgument (or
  // NotFound for a missing file) listing every problem. Thread-safe.
  Status Reload(const std::string& config_path);

 private:
  const TemplateInspector inspect_template_;
  mutable std::mutex mu_;
  std::shared_ptr<const RegistrySnapshot> current_;  // GUARDED_BY(mu_)
};

}  // namespace export_center::registry
