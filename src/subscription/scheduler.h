#pragma once
// SubscriptionScheduler: the duty that fires the subscriptions' slots
// (docs/subscriptions.md#the-scheduler), one round at a time; its owner runs
// RunRound on a PeriodicWorker (common/periodic_worker.h).
//
// A round
//   1. takes over runs whose lease ran out — an instance died running them,
//      or a deferral ended (SelectExpiredRuns, ReclaimExpiredRun: one taker);
//   2. claims the latest slot of each due subscription (ClaimSlot: exactly
//      once across the fleet, by the database clock) — or records it SKIPPED
//      when it is older than the catch-up window, never runs it late, and
//      never runs the burst of every missed slot (CronJob's
//      startingDeadlineSeconds model);
//   3. runs each run it holds through the SlotRunner and records what it
//      came to (FinishRun).
// What a run came to decides the subscription's fate: created resets the
// failures; a failure that makes `max_consecutive_failures` in a row pauses
// it (FAILURES); a lost permission or a type gone pauses it with that reason
// instead of failing every run; a full active limit defers the run
// (DeferRun: retried after `defer_ms`) until it was claimed `max_claims`
// times, then it ends DEFERRED — recorded either way, never silently lost.
//
// Thread-safety: one round at a time per scheduler; any number of schedulers
// (instances) may run rounds against one ledger at once — the ledger's
// conditional statements decide.

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "store/subscription_ledger.h"

namespace export_center::subscription {

struct SchedulerOptions {
  std::string instance;                    // this process's instance id
  int64_t catch_up_window_ms = 3'600'000;  // a slot missed by longer is SKIPPED, not run
  int64_t run_lease_ms = 120'000;          // how long a claimed run is this instance's
  int64_t defer_ms = 60'000;               // a deferred run is tried again after this
  int max_claims = 10;                     // a run deferred or taken over this often ends
  int max_consecutive_failures = 3;        // FAILED runs in a row that pause a subscription
  int batch = 50;                          // subscriptions and expired runs per round
};

// What running one claimed slot came to.
struct SlotOutcome {
  enum class Kind { kCreated, kDeferred, kFailed, kPause };
  Kind kind = Kind::kFailed;
  std::optional<int64_t> task_id{};  // kCreated: the task
  std::string detail{};              // why (deferred, failed, paused), for the run history
  std::string pause_reason{};        // kPause: PERMISSION_LOST or TYPE_GONE
};

// Runs one slot: creates its task through the create use case as the owner
// (app/ wires it: permissions and column policy re-checked at this run,
// relative dates resolved in the schedule's zone, the active limits,
// dedupe). Must not throw.
class SlotRunner {
 public:
  virtual ~SlotRunner() = default;
  virtual SlotOutcome Run(const store::Subscription& subscription, int64_t slot_at) = 0;
};

// What one round did, for the metrics (docs/observability.md).
struct RoundFigures {
  int fired = 0;       // runs handed to the runner
  int created = 0;     // ... that created their task
  int deferred = 0;    // ... deferred for a full active limit (DeferRun)
  int failed = 0;      // ... that failed
  int skipped = 0;     // slots recorded SKIPPED (missed outside the window, paused meanwhile)
  int paused = 0;      // subscriptions this round paused (failures, permission, type)
  int gave_up = 0;     // runs that ended DEFERRED after max_claims
  int taken_over = 0;  // expired runs this instance took over
};

class SubscriptionScheduler {
 public:
  // `ledger` and `runner` are not owned and outlive the scheduler.
  SubscriptionScheduler(store::SubscriptionLedger* ledger, SlotRunner* runner,
                        SchedulerOptions options);

  // One round (above). A store failure ends the round with its status; what
  // was recorded stays recorded, and the next round goes on from there.
  StatusOr<RoundFigures> RunRound();

 private:
  Status TakeOverExpiredRuns(RoundFigures& figures);
  Status FireDueSubscriptions(int64_t now_ms, RoundFigures& figures);
  Status FireOne(int64_t id, int64_t now_ms, RoundFigures& figures);
  // Runs a run this instance holds and records its outcome.
  Status RunHeld(const store::Subscription& subscription, const store::SubscriptionRun& run,
                 RoundFigures& figures);
  Status Pause(int64_t id, std::string_view reason, std::string_view detail, RoundFigures& figures);

  store::SubscriptionLedger* const ledger_;
  SlotRunner* const runner_;
  const SchedulerOptions options_;
};

}  // namespace export_center::subscription
