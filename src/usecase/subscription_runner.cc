#include "usecase/subscription_runner.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "common/digest.h"
#include "schedule/schedule.h"
#include "usecase/create_request.h"
#include "usecase/subscription_parameters.h"

namespace export_center::usecase {

using json = nlohmann::json;
using subscription::SlotOutcome;

namespace {

SlotOutcome Failed(std::string detail) {
  SlotOutcome out;
  out.kind = SlotOutcome::Kind::kFailed;
  out.detail = std::move(detail);
  return out;
}

SlotOutcome Pause(const char* reason, std::string detail) {
  SlotOutcome out;
  out.kind = SlotOutcome::Kind::kPause;
  out.pause_reason = reason;
  out.detail = std::move(detail);
  return out;
}

SlotOutcome Deferred(std::string detail) {
  SlotOutcome out;
  out.kind = SlotOutcome::Kind::kDeferred;
  out.detail = std::move(detail);
  return out;
}

SlotOutcome Created(int64_t task_id, std::string detail) {
  SlotOutcome out;
  out.kind = SlotOutcome::Kind::kCreated;
  out.task_id = task_id;
  out.detail = std::move(detail);
  return out;
}

// The owner as the snapshot of the last time they called a subscription route.
Principal OwnerWithSnapshot(const store::Subscription& s) {
  Principal owner;
  owner.user = s.spec.owner;
  owner.tenant = s.spec.tenant_id;
  owner.app = task::ParseAppCode(s.spec.app_code).value_or(task::AppCode::kPlatform);
  json perms = json::parse(s.spec.owner_perms, nullptr, false);
  if (perms.is_array()) {
    for (const json& perm : perms) {
      if (perm.is_string()) owner.perms.push_back(perm.get<std::string>());
    }
  }
  return owner;
}

}  // namespace

SlotOutcome CreateSlotRunner::Run(const store::Subscription& s, int64_t slot_at) {
  try {
    return RunChecked(s, slot_at);
  } catch (const std::exception& e) {
    spdlog::error("subscription {} slot {}: {}", s.id, slot_at, e.what());
    return Failed(std::string("internal error: ") + e.what());
  }
}

SlotOutcome CreateSlotRunner::RunChecked(const store::Subscription& s, int64_t slot_at) {
  auto snapshot = deps_.snapshot();
  const registry::ExportDefinition* def = snapshot->Find(s.spec.export_type);
  if (def == nullptr) {
    return Pause("TYPE_GONE", "export type " + s.spec.export_type + " is no longer registered");
  }
  if (!def->enabled) {
    return Pause("TYPE_GONE", "export type " + def->name + " is disabled");
  }
  auto zone = schedule::LoadZone(s.spec.time_zone);
  if (!zone.ok()) return Failed("timeZone: " + zone.status().message());
  json stored = json::parse(s.spec.parameters_json, nullptr, false);
  if (stored.is_discarded()) return Failed("the stored parameters do not parse");
  auto params = ResolveRelativeParameters(stored, slot_at, *zone);
  if (!params.ok()) return Failed(params.status().message());

  json body = {{"exportType", s.spec.export_type},
               {"format", s.spec.format},
               {"taskName", s.spec.task_name},
               {"parameters", *params}};
  if (!s.spec.locale.empty()) body["locale"] = s.spec.locale;
  const Principal owner = OwnerWithSnapshot(s);
  auto request = CheckCreateBody(body, owner, snapshot, deps_.create.limits);
  if (!request.ok()) {
    // The owner's create refused as a create would be: a permission they no
    // longer hold pauses the subscription instead of failing every run.
    if (request.status().code() == StatusCode::kPermissionDenied) {
      return Pause("PERMISSION_LOST", request.status().message());
    }
    return Failed(request.status().message());
  }
  // A retried slot (its instance died after the create, or the create
  // answered late) finds the task it created instead of creating another.
  auto earlier = deps_.ledger->FindSlotTask(s, Sha256Hex(request->canonical_parameters), slot_at);
  if (!earlier.ok()) return Deferred("the store did not answer: " + earlier.status().message());
  if (*earlier) return Created(**earlier, "the slot's task was created by an earlier try");

  const std::string trace_id =
      "subscription-" + std::to_string(s.id) + "-" + std::to_string(slot_at);
  auto created = CreateTask(deps_.create, owner, *request, trace_id);
  if (!created.ok()) {
    const Status& st = created.status();
    if (st.code() == StatusCode::kLimitExceeded || st.code() == StatusCode::kUnavailable) {
      return Deferred(st.message());
    }
    if (st.code() == StatusCode::kPermissionDenied) return Pause("PERMISSION_LOST", st.message());
    return Failed(st.message());
  }
  return Created(created->task.id,
                 created->deduplicated ? "an active task with the same request was reused" : "");
}

}  // namespace export_center::usecase
