#pragma once
// Private to config/: what its .cc files share beyond yaml_reader.h, so that
// a reload maps the process settings and the registry from one parsed
// document (registry_yaml.cc). No other component includes it.

#include <yaml-cpp/yaml.h>

#include <string>

#include "common/status.h"
#include "config/config.h"

namespace export_center::config {

// ParseConfig on an already parsed document.
StatusOr<AppConfig> ParseConfigNode(const YAML::Node& root, const std::string& path);

}  // namespace export_center::config
