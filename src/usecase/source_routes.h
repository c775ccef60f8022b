#pragma once
// SourceRoutes: what a use case needs to know of the route a type's rows come
// by (provider batches or the SQL template; docs/sql-template-route.md), asked
// per source kind without naming a route. app/ implements it over source/ and
// attempt/; use cases and tests see only this seam.
//
// Thread-safe: called from the HTTP workers and the scheduler at once.

#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "task/preview.h"
#include "task/task.h"

namespace export_center::usecase {

class SourceRoutes {
 public:
  virtual ~SourceRoutes() = default;

  // The version of the business contract the task's rows will be read under,
  // recorded at create and compared at execution (→ STALE;
  // docs/sql-template-route.md#consistency-checks). nullopt for a route
  // without one (provider types). A failure does not fail the create: the
  // task records no version and the check is skipped.
  virtual StatusOr<std::optional<std::string>> ContractVersionAtCreate(
      const registry::ExportDefinition& def, const registry::RegistrySnapshot& snapshot,
      const std::string& canonical_parameters, const identity::Principal& owner) = 0;

  // Opens the rows of a task that is never stored and reads its preview,
  // under the preview's caps (rows, time limit; attempt::ExportPreviewer).
  virtual StatusOr<task::PreviewTable> Preview(
      const task::Task& task, std::shared_ptr<const registry::RegistrySnapshot> snapshot) = 0;
};

}  // namespace export_center::usecase
