#include "subscription/scheduler.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "schedule/cron.h"
#include "schedule/schedule.h"

namespace export_center::subscription {
namespace {

using store::MarkOutcome;
using store::RunOutcome;
using store::Subscription;
using store::SubscriptionRun;

constexpr int64_t kMinuteMs = 60'000;

StatusOr<schedule::Schedule> ScheduleOf(const Subscription& s) {
  EC_ASSIGN_OR_RETURN(schedule::CronExpression cron, schedule::CronExpression::Parse(s.spec.cron));
  return schedule::Schedule::Make(std::move(cron), s.spec.time_zone, s.spec.business_days_only);
}

std::string Minutes(int64_t ms) { return std::to_string(ms / kMinuteMs) + " min"; }

}  // namespace

SubscriptionScheduler::SubscriptionScheduler(store::SubscriptionLedger* ledger, SlotRunner* runner,
                                             SchedulerOptions options)
    : ledger_(ledger), runner_(runner), options_(std::move(options)) {}

StatusOr<RoundFigures> SubscriptionScheduler::RunRound() {
  RoundFigures figures;
  EC_RETURN_IF_ERROR(TakeOverExpiredRuns(figures));
  EC_ASSIGN_OR_RETURN(int64_t now_ms, ledger_->DatabaseNowMs());
  EC_RETURN_IF_ERROR(FireDueSubscriptions(now_ms, figures));
  return figures;
}

Status SubscriptionScheduler::TakeOverExpiredRuns(RoundFigures& figures) {
  EC_ASSIGN_OR_RETURN(std::vector<SubscriptionRun> expired,
                      ledger_->SelectExpiredRuns(options_.batch));
  for (const SubscriptionRun& stale : expired) {
    EC_ASSIGN_OR_RETURN(std::optional<SubscriptionRun> run,
                        ledger_->ReclaimExpiredRun(stale.subscription_id, stale.slot_at,
                                                   options_.instance, options_.run_lease_ms));
    if (!run) continue;  // another instance took it, or it finished
    ++figures.taken_over;
    StatusOr<Subscription> subscription = ledger_->GetSubscription(run->subscription_id);
    if (subscription.status().code() == StatusCode::kNotFound) continue;  // deleted with its runs
    EC_RETURN_IF_ERROR(subscription.status());
    if (subscription->state != store::SubscriptionState::kActive) {
      // Paused since the slot was claimed: the slot is not run.
      EC_RETURN_IF_ERROR(ledger_
                             ->FinishRun(run->subscription_id, run->slot_at, options_.instance,
                                         RunOutcome::kSkipped, std::nullopt,
                                         "the subscription was paused before the run")
                             .status());
      ++figures.skipped;
      continue;
    }
    if (run->claims > options_.max_claims) {
      // Bounded: a run that kept meeting a full active limit (or kept losing
      // its instance) ends recorded, never retried for ever.
      EC_RETURN_IF_ERROR(
          ledger_
              ->FinishRun(run->subscription_id, run->slot_at, options_.instance,
                          RunOutcome::kDeferred, std::nullopt,
                          "given up after " + std::to_string(run->claims - 1) +
                              " tries; the last: " + run->detail.value_or("the instance stopped"))
              .status());
      ++figures.gave_up;
      continue;
    }
    EC_RETURN_IF_ERROR(RunHeld(*subscription, *run, figures));
  }
  return Status::Ok();
}

Status SubscriptionScheduler::FireDueSubscriptions(int64_t now_ms, RoundFigures& figures) {
  EC_ASSIGN_OR_RETURN(std::vector<int64_t> due, ledger_->SelectDueSubscriptions(options_.batch));
  for (int64_t id : due) EC_RETURN_IF_ERROR(FireOne(id, now_ms, figures));
  return Status::Ok();
}

Status SubscriptionScheduler::FireOne(int64_t id, int64_t now_ms, RoundFigures& figures) {
  StatusOr<Subscription> subscription = ledger_->GetSubscription(id);
  if (subscription.status().code() == StatusCode::kNotFound) return Status::Ok();
  EC_RETURN_IF_ERROR(subscription.status());
  const Subscription& s = *subscription;
  if (s.state != store::SubscriptionState::kActive || !s.next_slot_at) return Status::Ok();

  StatusOr<schedule::Schedule> schedule = ScheduleOf(s);
  if (!schedule.ok()) {
    // A stored schedule this binary cannot read (a zone gone from tzdata):
    // loud once, not a failure every round.
    return Pause(id, "FAILURES", "the schedule cannot be read: " + schedule.status().message(),
                 figures);
  }
  // The latest slot since the last one, never the burst of every missed slot.
  // None yet: the ledger found it due by the database clock, but this
  // round's clock has not reached a new slot (read just before a minute
  // turned); the next round fires it.
  const int64_t after = s.last_slot_at.value_or(*s.next_slot_at - 1);
  const std::optional<int64_t> latest = schedule->LatestIn(after, now_ms);
  if (!latest) return Status::Ok();
  const int64_t slot = *latest;
  const std::optional<int64_t> next = schedule->NextAfter(now_ms);
  const int64_t late_ms = now_ms - slot;
  if (late_ms > options_.catch_up_window_ms) {
    EC_ASSIGN_OR_RETURN(
        std::optional<SubscriptionRun> skipped,
        ledger_->ClaimSlot(id, slot, next, options_.instance, 0, RunOutcome::kSkipped,
                           "missed by " + Minutes(late_ms) + ", outside the catch-up window of " +
                               Minutes(options_.catch_up_window_ms)));
    if (skipped) ++figures.skipped;
    return Status::Ok();
  }
  EC_ASSIGN_OR_RETURN(std::optional<SubscriptionRun> run,
                      ledger_->ClaimSlot(id, slot, next, options_.instance, options_.run_lease_ms));
  if (!run) return Status::Ok();  // another instance fired it
  return RunHeld(s, *run, figures);
}

Status SubscriptionScheduler::RunHeld(const Subscription& s, const SubscriptionRun& run,
                                      RoundFigures& figures) {
  ++figures.fired;
  const SlotOutcome outcome = runner_->Run(s, run.slot_at);
  const std::string& who = options_.instance;
  switch (outcome.kind) {
    case SlotOutcome::Kind::kCreated:
      ++figures.created;
      return ledger_
          ->FinishRun(s.id, run.slot_at, who, RunOutcome::kCreated, outcome.task_id, outcome.detail)
          .status();
    case SlotOutcome::Kind::kDeferred:
      ++figures.deferred;
      return ledger_->DeferRun(s.id, run.slot_at, who, options_.defer_ms, outcome.detail).status();
    case SlotOutcome::Kind::kPause:
      EC_RETURN_IF_ERROR(ledger_
                             ->FinishRun(s.id, run.slot_at, who, RunOutcome::kSkipped, std::nullopt,
                                         outcome.detail)
                             .status());
      ++figures.skipped;
      return Pause(s.id, outcome.pause_reason, outcome.detail, figures);
    case SlotOutcome::Kind::kFailed:
      break;
  }
  ++figures.failed;
  EC_ASSIGN_OR_RETURN(store::SubscriptionLedger::FinishResult finished,
                      ledger_->FinishRun(s.id, run.slot_at, who, RunOutcome::kFailed, std::nullopt,
                                         outcome.detail));
  if (finished.mark != MarkOutcome::kMarked ||
      finished.consecutive_failures < options_.max_consecutive_failures) {
    return Status::Ok();
  }
  return Pause(s.id, "FAILURES",
               std::to_string(finished.consecutive_failures) +
                   " runs in a row failed; the last: " + outcome.detail,
               figures);
}

Status SubscriptionScheduler::Pause(int64_t id, std::string_view reason, std::string_view detail,
                                    RoundFigures& figures) {
  Status paused = ledger_->PauseSubscription(id, reason, detail);
  // Conflict: paused or changed by its owner meanwhile; their word stands.
  if (paused.code() == StatusCode::kConflict) return Status::Ok();
  EC_RETURN_IF_ERROR(paused);
  ++figures.paused;
  spdlog::warn("subscription {} paused ({}): {}", id, reason, detail);
  return Status::Ok();
}

}  // namespace export_center::subscription
