#include "dispatch/dlq_handler.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <optional>

#include "common/ids.h"
#include "common/utf8.h"
#include "task/command.h"

namespace export_center::dispatch {
namespace {

// The decode error quoted in the quarantine reason; the store bounds the
// whole reason again.
constexpr size_t kMaxErrorBytes = 400;

// How long the worker waits before taking a dead letter back after its own
// database failed, so an outage is not a busy loop.
constexpr std::chrono::milliseconds kRetryDelay = std::chrono::seconds(1);

std::string Property(const Delivery& d, std::string_view name) {
  auto it = d.properties.find(std::string(name));
  return it == d.properties.end() ? std::string() : it->second;
}

std::optional<int32_t> ParseVersion(const std::string& text) {
  int32_t version = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || ptr != text.data() + text.size() || version < 1) return std::nullopt;
  return version;
}

// The properties as sent, for the operator who has to find the message.
std::string RawProperties(const Delivery& d) {
  std::string out;
  for (const auto& [key, value] : d.properties) {
    if (!out.empty()) out += ", ";
    out += key + "=" + value;
  }
  return "{" + out + "}";
}

// Why the command was dead-lettered, for the outbox row's last_error: the
// consumer rejects a command only when it does not decode, so decoding it
// again here gives the real error.
std::string QuarantineReason(const Delivery& d) {
  auto command = task::DecodeCommand(d.payload);
  const std::string deliveries = " (after " + std::to_string(d.delivery_count) + " deliveries)";
  if (command.ok()) return "dead-lettered although the command decodes here" + deliveries;
  return "the export command could not be decoded: " +
         utf8::Excerpt(command.status().message(), kMaxErrorBytes) + deliveries;
}

}  // namespace

DlqHandler::DlqHandler(store::CommandQuarantine* store, CommandChannel* channel,
                       DlqObserver* observer)
    : store_(store),
      channel_(channel),
      observer_(observer != nullptr ? observer : &no_observer_),
      worker_({"dlq_handler", kRetryDelay}, [this] { return Round(); }) {}

DlqHandler::~DlqHandler() { Stop(); }

void DlqHandler::Start() { worker_.Start(); }

void DlqHandler::Stop() { worker_.Stop(); }

PeriodicWorker::Next DlqHandler::Round() {
  bool retry_later = false;
  channel_->ConsumeDeadLetter(std::chrono::milliseconds(200), [&](const Delivery& d) {
    DeliveryOutcome outcome = Handle(d);
    retry_later = outcome == DeliveryOutcome::kReject;
    return outcome;
  });
  return retry_later ? PeriodicWorker::Next::Interval() : PeriodicWorker::Next::Now();
}

DeliveryOutcome DlqHandler::Handle(const Delivery& delivery) {
  observer_->DeadLetterReceived();  // whether or not it can be located
  auto task_id = ParseId(Property(delivery, task::kPropTaskId));
  auto version = ParseVersion(Property(delivery, task::kPropDispatchVersion));
  const std::string event_id = Property(delivery, task::kPropEventId);
  if (!task_id || !version || event_id.empty()) {
    // Nothing to quarantine: keeping it would only make the handler's own
    // dead-letter loop. The operator gets everything needed to find it.
    spdlog::critical(
        "dead letter without usable taskId/dispatchVersion/eventId properties, "
        "acknowledged unhandled: message id {} properties {} after {} deliveries",
        delivery.message_id, RawProperties(delivery), delivery.delivery_count);
    return DeliveryOutcome::kAck;
  }
  const std::string reason = QuarantineReason(delivery);
  Status s = store_->QuarantineCommand(*task_id, *version, event_id, reason);
  if (s.ok()) {
    spdlog::error("task {} v{} event {}: poison command quarantined (message id {}): {}", *task_id,
                  *version, event_id, delivery.message_id, reason);
    return DeliveryOutcome::kAck;
  }
  if (s.code() == StatusCode::kConflict) {
    spdlog::error(
        "task {} v{} event {}: dead letter of an old or foreign command, acknowledged "
        "(message id {}): {}",
        *task_id, *version, event_id, delivery.message_id, s.message());
    return DeliveryOutcome::kAck;
  }
  // The handler's own database failure: never drop the dead letter
  // (docs/task-lifecycle.md#dead-letters-and-quarantine).
  spdlog::error("task {} v{} event {}: quarantine failed, dead letter kept for a retry: {}",
                *task_id, *version, event_id, s.ToString());
  return DeliveryOutcome::kReject;
}

}  // namespace export_center::dispatch
