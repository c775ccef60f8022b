#include "api/file_governance.h"

#include <algorithm>

#include "api/envelope.h"

namespace export_center::api {

std::vector<std::string> ColumnsWiderThanReader(const task::Task& t,
                                                const registry::ExportDefinition& def,
                                                const HoldsPermission& holds) {
  return task::ColumnsWiderThan(t.column_policy, task::DecideColumnPolicy(def.column_rules, holds));
}

std::vector<std::string> HeldColumnPermissions(const registry::ExportDefinition& def,
                                               const HoldsPermission& holds) {
  std::vector<std::string> held;
  for (const task::ColumnRule& rule : def.column_rules) {
    const std::string& perm = rule.required_permission;
    if (holds(perm) && std::find(held.begin(), held.end(), perm) == held.end()) {
      held.push_back(perm);
    }
  }
  return held;
}

nlohmann::json ColumnsRefusalEnvelope(const task::Task& t, const std::vector<std::string>& columns,
                                      const std::string& export_again_path) {
  std::string names;
  for (const std::string& c : columns) names += (names.empty() ? "" : ", ") + c;
  nlohmann::json envelope = ErrorEnvelope(
      403, "the file of task " + std::to_string(t.id) +
               " was governed for its requester and shows columns you may not see as it does (" +
               names + "); export again to get a file governed for your permissions");
  envelope["data"] = {
      {"reason", kColumnsNotPermitted}, {"columns", columns}, {"exportAgain", export_again_path}};
  return envelope;
}

}  // namespace export_center::api
