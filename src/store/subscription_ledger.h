#pragma once
// SubscriptionLedger: the subscriptions and the record of their runs
// (docs/subscriptions.md#the-ledger), for the scheduler and the use cases of
// subscriptions.
//
// Exactly once per slot across the fleet: a run is claimed by one
// conditional statement pair in one transaction — the subscription's
// last_slot_at moves forward only past it, and the run row's key is
// (subscription, slot) — so two instances that both saw a slot due, or one
// restarted, never both get it. The clock is the database's ({NOW}), like
// every lease here. A claimed run holds a lease: an instance that dies before
// finishing it leaves it to another (ReclaimExpiredRun), so a slot is never
// lost either; what the run creates must then be idempotent per slot (the
// task's dedupe key carries the slot).
//
// Thread-safety: every method may be called from any thread; each is one
// statement or transaction, safe to retry after Unavailable.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/leased_queue.h"

namespace export_center::store {

enum class SubscriptionState { kActive, kPaused };
std::string_view ToString(SubscriptionState state);

// What a run became. kClaimed: an instance is running it now.
enum class RunOutcome { kClaimed, kCreated, kDeferred, kSkipped, kFailed };
std::string_view ToString(RunOutcome outcome);

struct NewSubscription {
  std::string tenant_id;
  std::string app_code;
  std::string owner;
  std::string export_type;
  std::string format;
  std::string task_name;
  std::string parameters_json;  // may hold relative dates (schedule/relative_date.h)
  std::string cron;             // schedule/cron.h text
  std::string time_zone;        // IANA name
  bool business_days_only = false;
  std::string delivery_json = "{}";  // recipients, webhook, skip-if-empty
  int64_t first_slot_at = 0;         // the schedule's first slot after now
  // Migration 20. The owner's permissions when they last called a
  // subscription route (a JSON array of strings): a run is the owner's
  // create with these, so a permission the owner lost pauses it.
  std::string owner_perms = "[]";
  // The schedule as the owner sent it ({"preset":"daily","time":"09:00"} or
  // {"cron":"..."}), shown back; `cron` is what runs. "" for none.
  std::string schedule_json{};
  std::string locale{};  // the tasks' language ("" none), usecase::CreateRequest::locale
};

struct Subscription {
  int64_t id = 0;
  NewSubscription spec{};
  SubscriptionState state = SubscriptionState::kActive;
  std::optional<std::string> pause_reason{};  // OWNER, PERMISSION_LOST, TYPE_GONE, FAILURES
  std::optional<std::string> pause_detail{};
  int32_t consecutive_failures = 0;
  std::optional<int64_t> next_slot_at{};  // NULL while paused
  std::optional<int64_t> last_slot_at{};
  int32_t version = 1;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

struct SubscriptionRun {
  int64_t subscription_id = 0;
  int64_t slot_at = 0;
  RunOutcome outcome = RunOutcome::kClaimed;
  std::optional<int64_t> task_id{};
  std::string instance;
  std::optional<int64_t> lease_until{};
  int32_t claims = 1;  // 1 + how often an expired claim was taken over
  std::optional<std::string> detail{};
  int64_t fired_at = 0;
  int64_t updated_at = 0;
};

// What a console list narrows to; unset fields match everything.
struct SubscriptionFilter {
  std::optional<std::string> tenant_id{};
  std::optional<std::string> app_code{};
  std::optional<std::string> owner{};
  std::optional<SubscriptionState> state{};
};

// Caps checked in the create's transaction (per owner, per tenant).
struct SubscriptionCaps {
  int per_owner = 20;
  int per_tenant = 1000;
};

class SubscriptionLedger {
 public:
  virtual ~SubscriptionLedger() = default;

  // LimitExceeded naming the cap when the owner or the tenant already has as
  // many subscriptions as it allows.
  virtual StatusOr<Subscription> CreateSubscription(const NewSubscription& spec,
                                                    const SubscriptionCaps& caps) = 0;
  // NotFound when there is none.
  virtual StatusOr<Subscription> GetSubscription(int64_t id) = 0;
  // A tenant's subscriptions (one owner's when `owner` is set), by id, after `after_id`.
  virtual StatusOr<std::vector<Subscription>> ListSubscriptions(
      const std::string& tenant_id, const std::optional<std::string>& owner, int64_t after_id,
      int limit) = 0;
  // The operators' console: subscriptions matching `filter`, by id, after `after_id`.
  virtual StatusOr<std::vector<Subscription>> FindSubscriptions(const SubscriptionFilter& filter,
                                                                int64_t after_id, int limit) = 0;
  // An owner's edit: replaces what `spec` names (type, format, name,
  // parameters, schedule, zone, delivery, locale, owner_perms) when the stored
  // version is still `expected_version`; an ACTIVE subscription's next slot
  // becomes `spec.first_slot_at` (a PAUSED one keeps none). Returns the new
  // row (version + 1). NotFound when there is none; Conflict when the version
  // moved (another edit, a pause, a fired slot). Safe to retry: a retry of an
  // applied edit is a Conflict.
  virtual StatusOr<Subscription> UpdateSubscription(int64_t id, int32_t expected_version,
                                                    const NewSubscription& spec) = 0;
  // Stores `perms_json` as the permission snapshot of every subscription of
  // `owner` in `tenant_id` whose snapshot differs; returns how many changed.
  // Not an edit: the version stays. Idempotent.
  virtual StatusOr<int64_t> RefreshOwnerPerms(const std::string& tenant_id,
                                              const std::string& owner,
                                              const std::string& perms_json) = 0;
  // Deletes it and its runs. NotFound when there is none.
  virtual Status DeleteSubscription(int64_t id) = 0;

  // ACTIVE → PAUSED with a reason (next_slot_at cleared). Conflict when it is
  // not ACTIVE.
  virtual Status PauseSubscription(int64_t id, std::string_view reason,
                                   std::string_view detail) = 0;
  // PAUSED → ACTIVE from `next_slot_at` on, failures reset. Conflict when it is not PAUSED.
  virtual Status ResumeSubscription(int64_t id, int64_t next_slot_at) = 0;

  // Ids of up to `limit` ACTIVE subscriptions whose next slot is due by the
  // database clock, oldest due first.
  virtual StatusOr<std::vector<int64_t>> SelectDueSubscriptions(int limit) = 0;

  // Claims `slot_at` of an ACTIVE subscription whose last slot is before it,
  // and moves its next slot to `next_slot_at` (nullopt: none). Records the
  // run as kClaimed with a lease of `lease_ms` for `instance`, or — with
  // `outcome` kSkipped, a slot that is not run (missed outside the catch-up
  // window) — as finished. nullopt: another instance claimed it first, or the
  // subscription is paused or gone.
  virtual StatusOr<std::optional<SubscriptionRun>> ClaimSlot(
      int64_t id, int64_t slot_at, std::optional<int64_t> next_slot_at, const std::string& instance,
      int64_t lease_ms, RunOutcome outcome = RunOutcome::kClaimed,
      std::string_view detail = {}) = 0;

  // kClaimed(by instance) → `outcome`, with the task it created and a
  // detail. A kFailed outcome adds one to the subscription's consecutive
  // failures (any other resets them) and returns the count. kClaimLost when
  // the lease ran out and another instance took the run over.
  struct FinishResult {
    MarkOutcome mark = MarkOutcome::kMarked;
    int32_t consecutive_failures = 0;
  };
  virtual StatusOr<FinishResult> FinishRun(int64_t id, int64_t slot_at, const std::string& instance,
                                           RunOutcome outcome, std::optional<int64_t> task_id,
                                           std::string_view detail) = 0;

  // A claimed run that could not run now (the owner's active limit is
  // full) stays kClaimed, its lease moved to `retry_after_ms` from now and
  // `detail` recorded: when the lease runs out, SelectExpiredRuns offers it
  // again (to any instance) and ReclaimExpiredRun counts the attempt in
  // `claims`, which bounds the deferrals. kClaimLost when `instance` no
  // longer holds it.
  virtual StatusOr<MarkOutcome> DeferRun(int64_t id, int64_t slot_at, const std::string& instance,
                                         int64_t retry_after_ms, std::string_view detail) = 0;

  // Runs still kClaimed after their lease (an instance died running them),
  // oldest first; and the conditional take-over of one. nullopt: another
  // instance took it first or it finished.
  virtual StatusOr<std::vector<SubscriptionRun>> SelectExpiredRuns(int limit) = 0;
  virtual StatusOr<std::optional<SubscriptionRun>> ReclaimExpiredRun(int64_t id, int64_t slot_at,
                                                                     const std::string& instance,
                                                                     int64_t lease_ms) = 0;

  // The task an earlier try of a slot already created, so a retried slot
  // does not create a second one: the oldest task of the subscription's
  // owner (tenant, app, requested_by), type and task name with `params_hash`
  // requested at or after `since_ms` (the slot) and before the subscription's
  // next run was fired (so a late retry never adopts the next slot's task).
  // nullopt when there is none.
  virtual StatusOr<std::optional<int64_t>> FindSlotTask(const Subscription& subscription,
                                                        const std::string& params_hash,
                                                        int64_t since_ms) = 0;

  // The latest runs of a subscription, newest first.
  virtual StatusOr<std::vector<SubscriptionRun>> ListRuns(int64_t id, int limit) = 0;
  // The database's clock (epoch ms), the one every slot and lease is read by.
  virtual StatusOr<int64_t> DatabaseNowMs() = 0;

  // Deletes up to `limit` finished runs fired before `before_ms` (the run
  // history's retention); returns how many.
  virtual StatusOr<int64_t> PruneRuns(int64_t before_ms, int limit) = 0;
};

}  // namespace export_center::store
