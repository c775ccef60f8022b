#pragma once
// CreateSlotRunner: the subscription::SlotRunner over the create use case
// (docs/subscriptions.md#the-scheduler): a slot's run is the owner's create.
//
// For each slot it
//   - checks the type is still registered and enabled (else pause TYPE_GONE);
//   - resolves the relative dates in the schedule's zone at the slot;
//   - checks the body exactly as POST /export-tasks would (CheckCreateBody) as
//     the owner with the owner's permission snapshot, so the required
//     permission and the column policy are decided at this run (a permission
//     the owner no longer holds pauses it PERMISSION_LOST);
//   - looks for the task an earlier try of the same slot created
//     (SubscriptionLedger::FindSlotTask: the owner's task of the type, name
//     and resolved parameters since the slot), so a retried slot never creates
//     a second task;
//   - creates through usecase::CreateTask (active limits, dedupe, the guard
//     row, the contract version); the active limit full defers the run.
// Never throws. Thread-safe if its deps are.

#include <functional>
#include <memory>

#include "registry/registry.h"
#include "store/subscription_ledger.h"
#include "subscription/scheduler.h"
#include "usecase/create.h"

namespace export_center::usecase {

struct SlotRunnerDeps {
  store::SubscriptionLedger* ledger = nullptr;  // not owned
  std::function<std::shared_ptr<const registry::RegistrySnapshot>()> snapshot{};
  CreateDeps create{};  // the same as POST /export-tasks's
};

class CreateSlotRunner final : public subscription::SlotRunner {
 public:
  explicit CreateSlotRunner(SlotRunnerDeps deps) : deps_(std::move(deps)) {}

  subscription::SlotOutcome Run(const store::Subscription& subscription, int64_t slot_at) override;

 private:
  subscription::SlotOutcome RunChecked(const store::Subscription& subscription, int64_t slot_at);

  SlotRunnerDeps deps_;
};

}  // namespace export_center::usecase
