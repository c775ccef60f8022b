#include "dispatch/outbox_publisher.h"

#include <spdlog/spdlog.h>

#include "common/backoff.h"
#include "task/command.h"

namespace export_center::dispatch {

OutboxPublisher::OutboxPublisher(store::CommandOutbox* store, CommandChannel* channel,
                                 const PublisherOptions& config, std::string instance)
    : store_(store),
      channel_(channel),
      config_(config),
      instance_(std::move(instance)),
      worker_({"outbox_publish", std::chrono::milliseconds(config_.poll_interval_ms)}, [this] {
        // A full batch means more rows may be due: go again without waiting.
        return PublishDueOnce() >= config_.batch_size ? PeriodicWorker::Next::Now()
                                                      : PeriodicWorker::Next::Interval();
      }) {}

OutboxPublisher::~OutboxPublisher() { Stop(); }

void OutboxPublisher::Start() { worker_.Start(); }

void OutboxPublisher::Stop() { worker_.Stop(); }

void OutboxPublisher::Wake() { worker_.Wake(); }

// A pass ends early when the channel looks down — kFailuresThatEndAPass
// sends in a row failed — or when Stop() was called: with a broker that
// hangs, each send costs the whole send timeout (3 s), so a batch of 100
// would hold the publisher, and a shutdown, for five minutes. The rows not
// tried keep their state and are due in the next pass.
int OutboxPublisher::PublishDueOnce() {
  store::ClaimRound<store::OutboxEntry> round;
  round.batch_size = config_.batch_size;
  round.failures_that_end_a_round = kFailuresThatEndAPass;
  round.select_due = [this](int limit) { return store_->SelectDueOutbox(limit); };
  round.claim = [this](int64_t id) {
    return store_->ClaimOutbox(id, instance_, config_.lease_seconds);
  };
  round.handle = [this](const store::OutboxEntry& entry) { return SendOne(entry); };
  round.stopping = [this] { return Stopping(); };
  round.on_claim_error = [](int64_t id, const Status& error) {
    spdlog::warn("outbox publisher: claim of outbox {} failed: {}", id, error.ToString());
  };
  auto done = store::RunClaimRound(round);
  if (!done.ok()) {
    spdlog::warn("outbox publisher: cannot read due rows: {}", done.status().ToString());
    return 0;
  }
  if (done->gave_up_after) {
    spdlog::warn(
        "outbox publisher: {} sends in a row failed; the channel looks down, the other {} "
        "due rows wait for the next pass",
        *done->gave_up_after, done->left_untried);
  }
  return done->claimed;
}

bool OutboxPublisher::Stopping() { return worker_.Stopping(); }

bool OutboxPublisher::SendOne(const store::OutboxEntry& entry) {
  // Properties come from the outbox columns, so they always equal the
  // payload's identifiers and stay usable if the payload is ever corrupt.
  task::CommandProperties properties = {
      {std::string(task::kPropEventId), entry.event_id},
      {std::string(task::kPropTaskId), std::to_string(entry.task_id)},
      {std::string(task::kPropDispatchVersion), std::to_string(entry.dispatch_version)},
      {std::string(task::kPropSchemaVersion), std::to_string(task::kCommandSchemaVersion)},
  };
  Status sent = channel_->Publish(entry.payload_json, properties);
  if (sent.ok()) {
    auto marked = store_->MarkOutboxSent(entry.id, instance_);
    if (!marked.ok()) {
      // Sent but not recorded: the lease expires, the row is re-sent, and the
      // consumer absorbs the duplicate.
      spdlog::warn("outbox {} sent but not marked: {}", entry.id, marked.status().ToString());
    }
    return true;
  }
  const int64_t backoff = OutboxBackoffMs(config_.backoff_seconds, entry.attempt_count);
  spdlog::warn("outbox {} (task {} v{}) send failed, retry in {} ms: {}", entry.id, entry.task_id,
               entry.dispatch_version, backoff, sent.ToString());
  auto marked = store_->MarkOutboxFailed(entry.id, instance_, sent.message(), backoff);
  if (!marked.ok()) {
    spdlog::warn("outbox {} failure not recorded: {}", entry.id, marked.status().ToString());
  }
  return false;
}

}  // namespace export_center::dispatch
