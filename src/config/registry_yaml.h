#pragma once
// The export-type registry as written in the config file: maps the
// `provider-services` and `definitions` sections onto
// registry::RegistrySnapshot, checking every rule of docs/configuration.md
// ("Export-type registry"). All problems are reported together, one per
// line, each with its key path, e.g.
// "definitions.CUSTOMER_LIST.batch-size: 20 is out of range; allowed: [50, 1000]".
//
// Definitions naming a `datasource` are checked against the keys of the
// file's `datasources` section. A provider service's internal-token is
// overridden by the env var EXPORT_CENTER_PROVIDER_TOKEN_<NAME_UPPER_SNAKE>
// (customer-service -> EXPORT_CENTER_PROVIDER_TOKEN_CUSTOMER_SERVICE), so a
// reload applies it too.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "registry/registry.h"

namespace export_center::config {

// What checking a definition's `template-file` needs to know about an XLSX
// template: the `{name}` single values it uses and the built-ins every
// template may use. app/ supplies the inspector from render/, so neither
// config/ nor registry/ depends on the writers.
struct TemplateInfo {
  std::vector<std::string> single_values;
  std::vector<std::string> builtins;
};
// Reads template bytes. InvalidArgument, clearly worded, when the writers
// could not fill them. When empty, a definition naming a template-file is
// reported as a problem.
using TemplateInspector = std::function<StatusOr<TemplateInfo>(std::string_view template_bytes)>;

// Maps the registry sections of a YAML document given as text (tests).
StatusOr<registry::RegistrySnapshot> ParseRegistry(std::string_view yaml,
                                                   const TemplateInspector& inspect_template);

// Reads `path` and maps its registry sections, for start-up (LoadConfig has
// already checked the rest of the file). NotFound for a missing file.
StatusOr<registry::RegistrySnapshot> LoadRegistry(const std::string& path,
                                                  const TemplateInspector& inspect_template);

// The loader app/ hands to registry::Registry for Reload: reads `path` again
// and validates the WHOLE file (ParseConfig as well as the registry
// sections), so a file that would fail the next start-up is refused now.
// An unreadable file comes back as LoadConfig reports it; problems in it as
// registry::ReloadRefused lists them.
StatusOr<registry::RegistrySnapshot> LoadRegistryForReload(
    const std::string& path, const TemplateInspector& inspect_template);

}  // namespace export_center::config
