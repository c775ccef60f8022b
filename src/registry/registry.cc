#include "registry/registry.h"

#include <cctz/time_zone.h>

#include <chrono>
#include <utility>

namespace export_center::registry {
namespace {

std::string TwoDigits(int value) { return (value < 10 ? "0" : "") + std::to_string(value); }

bool SameServices(const std::map<std::string, ProviderService>& a,
                  const std::map<std::string, ProviderService>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, s] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.base_url != s.base_url || it->second.base_path != s.base_path ||
        it->second.internal_token != s.internal_token) {
      return false;
    }
  }
  return true;
}

}  // namespace

const ExportDefinition* RegistrySnapshot::Find(const std::string& type) const {
  auto it = definitions.find(type);
  return it == definitions.end() ? nullptr : &it->second;
}

const ProviderService* RegistrySnapshot::FindService(const std::string& name) const {
  auto it = services.find(name);
  return it == services.end() ? nullptr : &it->second;
}

const std::vector<std::string>& FileNamePlaceholders() {
  static const std::vector<std::string> kPlaceholders = {"taskName", "exportType", "taskId", "date",
                                                         "time"};
  return kPlaceholders;
}

Status ReloadRefused(const std::string& config_path, const std::vector<Status>& problems) {
  std::string text;
  for (const Status& s : problems) {
    if (s.ok()) continue;
    if (!text.empty()) text += '\n';
    text += s.message();
  }
  if (text.empty()) return Status::Ok();
  return InvalidArgument("reload of " + config_path +
                         " refused, keeping the current export types:\n" + text);
}

std::string ExpandFileName(const ExportDefinition& def, const FileNameVars& vars) {
  cctz::time_zone tz;
  if (!cctz::load_time_zone(def.timezone, &tz)) tz = cctz::utc_time_zone();
  auto tp = std::chrono::system_clock::time_point(std::chrono::milliseconds(vars.epoch_ms));
  cctz::civil_second cs = cctz::convert(std::chrono::time_point_cast<std::chrono::seconds>(tp), tz);
  std::map<std::string, std::string> values = {
      {"taskName", vars.task_name},
      {"exportType", vars.export_type},
      {"taskId", std::to_string(vars.task_id)},
      {"date", std::to_string(cs.year()) + TwoDigits(cs.month()) + TwoDigits(cs.day())},
      {"time", TwoDigits(cs.hour()) + TwoDigits(cs.minute()) + TwoDigits(cs.second())}};
  std::string out;
  size_t pos = 0;
  const std::string& pattern = def.file_name_pattern;
  while (pos < pattern.size()) {
    size_t open = pattern.find('{', pos);
    size_t close = open == std::string::npos ? open : pattern.find('}', open);
    if (close == std::string::npos) {
      out += pattern.substr(pos);
      break;
    }
    out += pattern.substr(pos, open - pos);
    auto it = values.find(pattern.substr(open + 1, close - open - 1));
    out += it != values.end() ? it->second : pattern.substr(open, close - open + 1);
    pos = close + 1;
  }
  return out;
}

Registry::Registry(RegistrySnapshot initial, SnapshotLoader load)
    : load_(std::move(load)),
      current_(std::make_shared<const RegistrySnapshot>(std::move(initial))) {}

std::shared_ptr<const RegistrySnapshot> Registry::Current() const {
  MutexLock lock(&mu_);
  return current_;
}

Status Registry::Reload(const std::string& config_path) {
  if (!load_) return Internal("export-type registry: no loader to reload " + config_path);
  StatusOr<RegistrySnapshot> next = load_(config_path);
  if (!next.ok()) return next.status();
  MutexLock lock(&mu_);
  if (!SameServices(current_->services, next->services)) {
    return ReloadRefused(config_path,
                         {InvalidArgument("provider-services: differs from the allow-list loaded "
                                          "at start-up; allowed: changes to definitions only "
                                          "(restart to change provider-services)")});
  }
  current_ = std::make_shared<const RegistrySnapshot>(std::move(next).value());
  return Status::Ok();
}

task::Languages LanguagesFor(const ExportDefinition& def, const task::Task& task) {
  return {task.locale, def.locale};
}

std::vector<task::LabelOverride> LabelOverridesFor(const ExportDefinition& def,
                                                   const task::Languages& languages) {
  std::vector<task::LabelOverride> out;
  out.reserve(def.column_labels.size());
  for (const ColumnLabels& c : def.column_labels) {
    task::LabelOverride o{.key = c.key, .labels = {}, .label_missing = c.label_missing};
    o.labels.reserve(c.labels.size());
    for (const auto& [value, label] : c.labels) o.labels.emplace_back(value, label.In(languages));
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace export_center::registry
