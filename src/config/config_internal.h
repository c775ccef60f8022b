#pragma once
// Private to config/: what its .cc files share beyond yaml_reader.h, so that
// a reload maps the process settings and the registry from one parsed
// document (registry_yaml.cc). No other component includes it.

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "common/status.h"
#include "config/config.h"

namespace export_center::config {

// ParseConfig on an already parsed document, with the process's environment.
StatusOr<AppConfig> ParseConfigNode(const YAML::Node& root, const std::string& path);
// The same with the EXPORT_CENTER_ variables given (tests).
StatusOr<AppConfig> ParseConfigNode(const YAML::Node& root, const std::string& path,
                                    std::map<std::string, std::string> env_vars);

}  // namespace export_center::config
