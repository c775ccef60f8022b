#include "dispatch/dlq_handler.h"

#include <spdlog/spdlog.h>

#include <charconv>

#include "common/ids.h"
#include "task/command.h"

namespace export_center::dispatch {
namespace {

std::string Property(const Delivery& d, std::string_view name) {
  auto it = d.properties.find(std::string(name));
  return it == d.properties.end() ? std::string() : it->second;
}

}  // namespace

DlqHandler::DlqHandler(store::TaskStore* store, CommandChannel* channel,
                       std::function<void()> on_dead_letter)
    : store_(store), channel_(channel), on_dead_letter_(std::move(on_dead_letter)) {}

DlqHandler::~DlqHandler() { Stop(); }

void DlqHandler::Start() {
  if (worker_.joinable()) return;
  worker_ = std::thread([this] {
    while (!stopping_) {
      channel_->ConsumeDeadLetter(std::chrono::milliseconds(200), [this](const Delivery& d) {
        Status s = Handle(d);
        if (!s.ok()) spdlog::error("dead letter not quarantined: {}", s.ToString());
      });
    }
  });
}

void DlqHandler::Stop() {
  stopping_ = true;
  if (worker_.joinable()) worker_.join();
}

Status DlqHandler::Handle(const Delivery& delivery) {
  if (on_dead_letter_) on_dead_letter_();  // counted whether or not it can be located
  auto task_id = ParseId(Property(delivery, task::kPropTaskId));
  const std::string version_text = Property(delivery, task::kPropDispatchVersion);
  int32_t version = 0;
  auto [ptr, ec] =
      std::from_chars(version_text.data(), version_text.data() + version_text.size(), version);
  if (!task_id || ec != std::errc() || ptr != version_text.data() + version_text.size() ||
      version < 1) {
    return InvalidArgument("dead letter without usable taskId/dispatchVersion properties");
  }
  const std::string event_id = Property(delivery, task::kPropEventId);
  spdlog::error("task {} v{} event {}: poison command quarantined after {} deliveries", *task_id,
                version, event_id, delivery.delivery_count);
  return store_->QuarantineCommand(*task_id, version, event_id,
                                   "the export command could not be decoded and was quarantined");
}

}  // namespace export_center::dispatch
