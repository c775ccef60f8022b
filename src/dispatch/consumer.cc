#include "dispatch/consumer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/thread_guard.h"
#include "task/command.h"

namespace export_center::dispatch {

Consumer::Consumer(CommandChannel* channel, attempt::AttemptDeps deps)
    : channel_(channel), deps_(std::move(deps)) {}

Consumer::~Consumer() { Stop(); }

void Consumer::Start() {
  if (!threads_.empty()) return;
  for (int i = 0; i < deps_.consumer.concurrency; ++i) {
    threads_.push_back(StartGuardedThread("consumer", [this] { Loop(); }));
  }
}

void Consumer::Stop() {
  if (threads_.empty()) return;
  stopping_ = true;
  // Attempts may finish until the last fifth of the grace (at most 5 s);
  // then the signal cancels what each is waiting for — a replica statement
  // that hangs included (docs/sql-template-route.md#deadlines) — and the
  // rest of the grace is for handing them back.
  const auto grace = std::chrono::milliseconds(deps_.consumer.shutdown_grace_seconds * 1000);
  const auto reserve = std::min(grace / 5, std::chrono::milliseconds(5000));
  const auto deadline = std::chrono::steady_clock::now() + grace - reserve;
  while (running_attempts_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  shutdown_.Set(Unavailable("shutting down"));
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Consumer::Loop() {
  while (!stopping_) {
    channel_->ConsumeOne(std::chrono::milliseconds(200),
                         [this](const Delivery& d) { return Handle(d); });
  }
}

DeliveryOutcome Consumer::Handle(const Delivery& delivery) {
  auto command = task::DecodeCommand(delivery.payload);
  if (!command.ok()) {
    // Never acknowledged as processed: redelivered, then dead-lettered and
    // quarantined by the DlqHandler from the properties
    // (docs/task-lifecycle.md#dead-letters-and-quarantine).
    spdlog::error("poison command (delivery {}): {}", delivery.delivery_count,
                  command.status().ToString());
    return DeliveryOutcome::kReject;
  }
  store::ClaimRequest request{command->task_id, command->dispatch_version, deps_.instance,
                              deps_.consumer.lease_seconds, deps_.consumer.max_duration_seconds};
  request.tenant_running_limit = TenantRunningLimit(deps_.consumer);
  request.handback_backoff_ms = deps_.consumer.tenant_handback_ms;
  auto claim = deps_.store->ClaimTask(request);
  if (!claim.ok()) {
    // The database is unreachable. Acknowledging loses nothing: the outbox row
    // is SENT and the reconciler re-sends it after sent-stale-seconds.
    spdlog::warn("task {} v{}: claim failed: {}", command->task_id, command->dispatch_version,
                 claim.status().ToString());
    return DeliveryOutcome::kAck;
  }
  if (!claim->claimed && claim->miss == store::ClaimMiss::kTenantAtLimit) {
    // Handed back through the outbox (the row is PENDING again, due after the
    // hand-back back-off): acknowledge and take the next command.
    spdlog::debug("task {} v{}: tenant at its running limit, handed back", command->task_id,
                  command->dispatch_version);
    return DeliveryOutcome::kAck;
  }
  if (!claim->claimed) {
    spdlog::info("task {} v{} event {}: not claimed ({}), acknowledged", command->task_id,
                 command->dispatch_version, command->event_id,
                 claim->miss ? store::ToString(*claim->miss) : "unknown");
    return DeliveryOutcome::kAck;
  }
  const task::Task& task = *claim->task;
  if (deps_.observer != nullptr && task.dispatch_version == 1 && task.attempt_count == 1 &&
      task.started_at) {
    deps_.observer->FirstStarted(
        task, static_cast<double>(*task.started_at - task.requested_at) / 1000.0);
  }
  ++running_attempts_;
  attempt::RunExportAttempt(deps_, *claim->task, shutdown_);
  --running_attempts_;
  return DeliveryOutcome::kAck;
}

}  // namespace export_center::dispatch
