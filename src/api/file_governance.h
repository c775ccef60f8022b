#pragma once
// Column governance of downloads (docs/http-api.md#column-governance-of-downloads).
//
// A task's file is governed for its requester when the task is created: the
// task's column_policy (task/column_policy.h) says which columns the file
// omits, masks or hashes. Anyone else who may download it — a holder of
// platform:download:all, whoever follows a link such a holder signed, the
// requester after a permission was taken away — gets it only when it is no
// wider than the file that reader would get: the reader's policy is decided
// at every download and signing from the definition's current rules and the
// reader's permissions (for a signed link: the signer's column permissions,
// carried in the grant). Otherwise the answer is a 403 that offers "export
// again", which writes the reader's own governed file.
//
// Pure functions; any thread.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "registry/export_definition.h"
#include "task/task.h"

namespace export_center::api {

// Whether the reader holds a permission.
using HoldsPermission = std::function<bool(const std::string&)>;

// The envelope's `data.reason` of the refusal.
inline constexpr char kColumnsNotPermitted[] = "COLUMNS_NOT_PERMITTED";

// The governed columns `t`'s file shows wider than a reader holding `holds`
// may see under `def`'s current rules, in rule order; empty when the file may
// be handed out.
std::vector<std::string> ColumnsWiderThanReader(const task::Task& t,
                                                const registry::ExportDefinition& def,
                                                const HoldsPermission& holds);

// The permissions of `def`'s column rules the reader holds, each once, in rule
// order: what a signed link carries so that following it decides the signer's
// policy against the rules in force then.
std::vector<std::string> HeldColumnPermissions(const registry::ExportDefinition& def,
                                               const HoldsPermission& holds);

// The refusal: {"code":"403","message":…,"data":{"reason":"COLUMNS_NOT_PERMITTED",
// "columns":[…],"exportAgain":"<path of POST …/export-again>"}}. The message
// names the columns (never a value) and offers export again.
nlohmann::json ColumnsRefusalEnvelope(const task::Task& t, const std::vector<std::string>& columns,
                                      const std::string& export_again_path);

}  // namespace export_center::api
