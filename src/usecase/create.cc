#include "usecase/create.h"

#include <spdlog/spdlog.h>

#include "common/digest.h"

namespace export_center::usecase {

bool KeyDerivationGate::TryEnter() {
  int used = in_use_.load();
  while (used < capacity_) {
    if (in_use_.compare_exchange_weak(used, used + 1)) return true;
  }
  return false;
}

void KeyDerivationGate::Leave() { in_use_.fetch_sub(1); }

bool IsKeyDerivationBusy(const Status& status) {
  return status.code() == StatusCode::kUnavailable && status.message() == kKeyDerivationBusy;
}

namespace {

// The wrapped key material of `password`, derived within the gate's bound.
StatusOr<WrappedFileKey> SealPassword(const CreateDeps& deps, const Principal& owner,
                                      const registry::ExportDefinition& def,
                                      const std::string& password) {
  if (!deps.seal_file_password) return Internal("password-protected files are not configured");
  if (deps.key_derivations != nullptr && !deps.key_derivations->TryEnter()) {
    spdlog::warn("file key derivation full ({} at once) exportType={} tenantId={}",
                 deps.key_derivations->capacity(), def.name, owner.tenant);
    return Status(StatusCode::kUnavailable, kKeyDerivationBusy);
  }
  auto sealed = deps.seal_file_password(password);
  if (deps.key_derivations != nullptr) deps.key_derivations->Leave();
  if (!sealed.ok()) {
    // The code only: nothing of the password's path reaches a log.
    spdlog::error("file key not sealed exportType={} tenantId={}: {}", def.name, owner.tenant,
                  StatusCodeName(sealed.status().code()));
    return Internal("the file password could not be protected");
  }
  return sealed;
}

}  // namespace

StatusOr<CreateResult> CreateTask(const CreateDeps& deps, const Principal& owner,
                                  const CreateRequest& request, const std::string& trace_id) {
  const registry::ExportDefinition* def = request.definition;
  const std::string& canonical = request.canonical_parameters;
  store::NewTask nt;
  nt.tenant_id = owner.tenant;
  nt.app_code = owner.app;
  nt.requested_by = owner.user;
  nt.export_type = def->name;
  nt.task_name = request.task_name;
  nt.format = request.format;
  nt.parameters_json = canonical;
  nt.params_hash = Sha256Hex(canonical);
  nt.max_attempts = def->max_attempts;
  nt.column_policy = request.column_policy;
  nt.locale = request.locale;
  EC_RETURN_IF_ERROR(CheckFilePasswordGiven(request));
  if (!request.file_password.empty()) {
    EC_ASSIGN_OR_RETURN(nt.file_key, SealPassword(deps, owner, *def, request.file_password));
  }
  if (deps.routes != nullptr) {
    auto version = deps.routes->ContractVersionAtCreate(*def, *request.snapshot, canonical, owner);
    if (version.ok()) {
      nt.contract_version = *version;
    } else {
      // Availability of create beats the version check: without a recorded
      // version the executor skips the comparison (and logs it).
      spdlog::warn("contract version not recorded exportType={} tenantId={}: {}", def->name,
                   owner.tenant, version.status().ToString());
    }
  }
  nt.trace_id = trace_id;
  store::CreateLimits limits{deps.limits.dedupe_window_seconds, deps.limits.max_active_per_user,
                             deps.limits.max_active_per_type};
  auto created = deps.store->CreateTask(nt, limits);
  if (!created.ok()) {
    if (created.status().code() == StatusCode::kLimitExceeded) return created.status();
    return created.status().WithContext("creating task");
  }
  spdlog::info("task created task_id={} exportType={} tenantId={} deduplicated={} encrypted={}",
               created->task.id, def->name, owner.tenant, created->deduplicated,
               created->task.encrypted);
  if (!created->deduplicated && deps.on_created) deps.on_created(def->name);
  return CreateResult{std::move(created->task), created->deduplicated};
}

}  // namespace export_center::usecase
