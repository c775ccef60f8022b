#pragma once
// SubscriptionLedgerWrapper: a SubscriptionLedger that forwards every call to
// another (leveldb's EnvWrapper, like task_store_wrapper.h). A fake — a test
// clock, a fault — derives from it and overrides only what it changes.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/subscription_ledger.h"

namespace export_center::store {

class SubscriptionLedgerWrapper : public SubscriptionLedger {
 public:
  explicit SubscriptionLedgerWrapper(std::unique_ptr<SubscriptionLedger> target)
      : t_(std::move(target)) {}

  StatusOr<Subscription> CreateSubscription(const NewSubscription& spec,
                                            const SubscriptionCaps& caps) override {
    return t_->CreateSubscription(spec, caps);
  }
  StatusOr<Subscription> GetSubscription(int64_t id) override { return t_->GetSubscription(id); }
  StatusOr<std::vector<Subscription>> ListSubscriptions(const std::string& tenant_id,
                                                        const std::optional<std::string>& owner,
                                                        int64_t after_id, int limit) override {
    return t_->ListSubscriptions(tenant_id, owner, after_id, limit);
  }
  StatusOr<std::vector<Subscription>> FindSubscriptions(const SubscriptionFilter& filter,
                                                        int64_t after_id, int limit) override {
    return t_->FindSubscriptions(filter, after_id, limit);
  }
  StatusOr<Subscription> UpdateSubscription(int64_t id, int32_t expected_version,
                                            const NewSubscription& spec) override {
    return t_->UpdateSubscription(id, expected_version, spec);
  }
  StatusOr<int64_t> RefreshOwnerPerms(const std::string& tenant_id, const std::string& owner,
                                      const std::string& perms_json) override {
    return t_->RefreshOwnerPerms(tenant_id, owner, perms_json);
  }
  Status DeleteSubscription(int64_t id) override { return t_->DeleteSubscription(id); }
  Status PauseSubscription(int64_t id, std::string_view reason, std::string_view detail) override {
    return t_->PauseSubscription(id, reason, detail);
  }
  Status ResumeSubscription(int64_t id, int64_t next_slot_at) override {
    return t_->ResumeSubscription(id, next_slot_at);
  }
  StatusOr<std::vector<int64_t>> SelectDueSubscriptions(int limit) override {
    return t_->SelectDueSubscriptions(limit);
  }
  StatusOr<std::optional<SubscriptionRun>> ClaimSlot(int64_t id, int64_t slot_at,
                                                     std::optional<int64_t> next_slot_at,
                                                     const std::string& instance, int64_t lease_ms,
                                                     RunOutcome outcome,
                                                     std::string_view detail) override {
    return t_->ClaimSlot(id, slot_at, next_slot_at, instance, lease_ms, outcome, detail);
  }
  StatusOr<FinishResult> FinishRun(int64_t id, int64_t slot_at, const std::string& instance,
                                   RunOutcome outcome, std::optional<int64_t> task_id,
                                   std::string_view detail) override {
    return t_->FinishRun(id, slot_at, instance, outcome, task_id, detail);
  }
  StatusOr<MarkOutcome> DeferRun(int64_t id, int64_t slot_at, const std::string& instance,
                                 int64_t retry_after_ms, std::string_view detail) override {
    return t_->DeferRun(id, slot_at, instance, retry_after_ms, detail);
  }
  StatusOr<std::vector<SubscriptionRun>> SelectExpiredRuns(int limit) override {
    return t_->SelectExpiredRuns(limit);
  }
  StatusOr<std::optional<SubscriptionRun>> ReclaimExpiredRun(int64_t id, int64_t slot_at,
                                                             const std::string& instance,
                                                             int64_t lease_ms) override {
    return t_->ReclaimExpiredRun(id, slot_at, instance, lease_ms);
  }
  StatusOr<std::optional<int64_t>> FindSlotTask(const Subscription& subscription,
                                                const std::string& params_hash,
                                                int64_t since_ms) override {
    return t_->FindSlotTask(subscription, params_hash, since_ms);
  }
  StatusOr<std::vector<SubscriptionRun>> ListRuns(int64_t id, int limit) override {
    return t_->ListRuns(id, limit);
  }
  StatusOr<int64_t> DatabaseNowMs() override { return t_->DatabaseNowMs(); }
  StatusOr<int64_t> PruneRuns(int64_t before_ms, int limit) override {
    return t_->PruneRuns(before_ms, limit);
  }

 protected:
  SubscriptionLedger& target() { return *t_; }

 private:
  std::unique_ptr<SubscriptionLedger> t_;
};

}  // namespace export_center::store
