#pragma once
// The subscriptions' use cases (docs/subscriptions.md, docs/http-api.md#subscriptions):
// what an owner — or an operator of the subscription's scope — can do with a
// subscription, as plain functions over the SubscriptionLedger and the
// registry; api/ parses HTTP and calls these, never the ledger.
//
// A subscription body is checked as a create would be (CheckCreateBody: the
// type registered, enabled and allowed to the caller, the parameters under
// the definition) plus its own rules: a preset or a 5-field cron, an IANA
// zone (default the definition's), no two slots closer than the minimum
// interval, relative dates only on DATE parameters, recipients within the
// configured mail domains. Errors are InvalidArgument naming the field
// (`schedule.cron`, `timeZone`, `parameters.from`, `delivery.emails[1]`).
//
// Who: the owner (tenant, app and user of the caller) or an operator of its
// scope (platform:export:operate in its tenant and app,
// platform:export:operate-all anywhere); anyone else gets NotFound, exactly
// as for a subscription that does not exist. Every call by an owner stores
// the caller's permissions as the snapshot its runs create with
// (RefreshOwnerPerms). Thread-safe: plain functions, any thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "identity/principal.h"
#include "notify/mail/mail_options.h"
#include "registry/registry.h"
#include "store/subscription_ledger.h"
#include "subscription/subscription_options.h"
#include "task/limits.h"

namespace export_center::usecase {

using identity::Principal;

inline constexpr char kSubscriptionOperatePermission[] = "platform:export:operate";
inline constexpr char kSubscriptionOperateAllPermission[] = "platform:export:operate-all";

struct SubscriptionDeps {
  store::SubscriptionLedger* ledger = nullptr;  // not owned
  // The registry's current snapshot (not owned; the process's).
  std::function<std::shared_ptr<const registry::RegistrySnapshot>()> snapshot{};
  task::LimitsOptions limits{};
  subscription::SubscriptionOptions options{};
  // The `mail:` section; null or disabled: a body with delivery.emails is refused.
  const notify::mail::MailOptions* mail = nullptr;
  // The zone of a body without timeZone whose definition names none.
  std::string default_time_zone = "Asia/Shanghai";
  // Called after a run-now was claimed (wakes the scheduler). Optional.
  std::function<void()> on_run_now{};
};

// A subscription as the API shows it: the row and what the schedule says of it.
struct SubscriptionView {
  store::Subscription subscription{};
  std::vector<int64_t> next_runs{};  // the next 3 slots; none while paused
};

// The checked form of a body (create or edit), before it is stored. `now_ms`
// is the database's clock: the first slot comes after it. Public for tests.
StatusOr<store::NewSubscription> CheckSubscriptionBody(const SubscriptionDeps& deps,
                                                       const nlohmann::json& body,
                                                       const Principal& owner, int64_t now_ms);

// POST /subscriptions: LimitExceeded naming the cap when the owner or the
// tenant has the most allowed.
StatusOr<SubscriptionView> CreateSubscription(const SubscriptionDeps& deps, const Principal& p,
                                              const nlohmann::json& body);
// GET /subscriptions/{id}. NotFound for anyone but the owner and operators of its scope.
StatusOr<SubscriptionView> GetSubscription(const SubscriptionDeps& deps, const Principal& p,
                                           const std::string& id);
// GET /subscriptions: the caller's own, by id after `after_id`.
StatusOr<std::vector<SubscriptionView>> ListOwnSubscriptions(const SubscriptionDeps& deps,
                                                             const Principal& p, int64_t after_id,
                                                             int limit);
// PUT /subscriptions/{id}: the body as for a create plus "version"; Conflict
// when the version moved. The body is checked as its owner's (an operator's
// edit keeps the owner and the owner's snapshot).
StatusOr<SubscriptionView> EditSubscription(const SubscriptionDeps& deps, const Principal& p,
                                            const std::string& id, const nlohmann::json& body);
// DELETE /subscriptions/{id}: it and its run history.
Status DeleteSubscription(const SubscriptionDeps& deps, const Principal& p, const std::string& id);
// Pause (reason OWNER, the detail names who) and resume (from the next slot
// after now, failures reset). Conflict when it already is.
StatusOr<SubscriptionView> PauseSubscription(const SubscriptionDeps& deps, const Principal& p,
                                             const std::string& id);
StatusOr<SubscriptionView> ResumeSubscription(const SubscriptionDeps& deps, const Principal& p,
                                              const std::string& id);
// POST /subscriptions/{id}/run: claims a slot at the database's now, left to
// the scheduler's next round (its lease already out), so the run is the
// scheduler's like every other — exactly once, recorded. Conflict while paused.
StatusOr<store::SubscriptionRun> RunSubscriptionNow(const SubscriptionDeps& deps,
                                                    const Principal& p, const std::string& id);
// GET /subscriptions/{id}/runs: the latest `limit`, newest first.
StatusOr<std::vector<store::SubscriptionRun>> ListSubscriptionRuns(const SubscriptionDeps& deps,
                                                                   const Principal& p,
                                                                   const std::string& id,
                                                                   int limit);

// The console (GET /operator/subscriptions): the subscriptions of the
// caller's scope (`tenant` narrows operate-all), optionally in one state.
// PermissionDenied for a caller who is no operator.
StatusOr<std::vector<SubscriptionView>> ListScopeSubscriptions(
    const SubscriptionDeps& deps, const Principal& p, const std::string& tenant,
    std::optional<store::SubscriptionState> state, int64_t after_id, int limit);

// Whether `p` may read and change `s`: its owner, or an operator of its scope.
bool CanManageSubscription(const Principal& p, const store::Subscription& s);

}  // namespace export_center::usecase
