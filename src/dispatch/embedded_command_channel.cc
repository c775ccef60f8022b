#include "dispatch/embedded_command_channel.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace export_center::dispatch {
namespace {

class EmbeddedCommandChannel final : public CommandChannel {
 public:
  explicit EmbeddedCommandChannel(int delivery_limit)
      : delivery_limit_(delivery_limit < 1 ? 1 : delivery_limit) {}

  Status Publish(const std::string& payload, const task::CommandProperties& properties) override {
    std::lock_guard lock(mu_);
    if (closed_) return Unavailable("embedded channel is closed");
    queue_.push_back(Delivery{payload, properties, 1, "embedded-" + std::to_string(++published_)});
    ready_.notify_one();
    return Status::Ok();
  }

  bool ConsumeOne(std::chrono::milliseconds wait,
                  const std::function<DeliveryOutcome(const Delivery&)>& handler) override {
    std::optional<Delivery> delivery = Pop(queue_, wait);
    if (!delivery) return false;
    if (handler(*delivery) == DeliveryOutcome::kReject) Requeue(std::move(*delivery));
    return true;
  }

  bool ConsumeDeadLetter(std::chrono::milliseconds wait,
                         const std::function<DeliveryOutcome(const Delivery&)>& handler) override {
    std::optional<Delivery> delivery = Pop(dead_letters_, wait);
    if (!delivery) return false;
    if (handler(*delivery) == DeliveryOutcome::kReject) {
      // Not recorded by the handler: a dead letter is never dropped.
      std::lock_guard lock(mu_);
      dead_letters_.push_back(std::move(*delivery));
      ready_.notify_all();
    }
    return true;
  }

  void Close() override {
    std::lock_guard lock(mu_);
    closed_ = true;
    ready_.notify_all();
  }

 private:
  std::optional<Delivery> Pop(std::deque<Delivery>& from, std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    ready_.wait_for(lock, wait, [&] { return closed_ || !from.empty(); });
    if (closed_ || from.empty()) return std::nullopt;
    Delivery d = std::move(from.front());
    from.pop_front();
    return d;
  }

  // A rejected (undecodable) command is redelivered until the limit, then
  // dead-lettered; it is never silently dropped.
  void Requeue(Delivery delivery) {
    std::lock_guard lock(mu_);
    if (delivery.delivery_count >= delivery_limit_) {
      dead_letters_.push_back(std::move(delivery));
    } else {
      ++delivery.delivery_count;
      queue_.push_back(std::move(delivery));
    }
    ready_.notify_all();
  }

  const int delivery_limit_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<Delivery> queue_;         // GUARDED_BY(mu_)
  std::deque<Delivery> dead_letters_;  // GUARDED_BY(mu_)
  bool closed_ = false;                // GUARDED_BY(mu_)
  int64_t published_ = 0;              // GUARDED_BY(mu_)
};

}  // namespace

std::unique_ptr<CommandChannel> NewEmbeddedCommandChannel(int delivery_limit) {
  return std::make_unique<EmbeddedCommandChannel>(delivery_limit);
}

}  // namespace export_center::dispatch
