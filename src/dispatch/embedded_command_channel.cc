#include "dispatch/embedded_command_channel.h"

#include <deque>
#include <optional>
#include <string>

#include "common/mutex.h"

namespace export_center::dispatch {
namespace {

class EmbeddedCommandChannel final : public CommandChannel {
 public:
  explicit EmbeddedCommandChannel(int delivery_limit)
      : delivery_limit_(delivery_limit < 1 ? 1 : delivery_limit) {}

  Status Publish(const std::string& payload, const task::CommandProperties& properties) override {
    MutexLock lock(&mu_);
    if (closed_) return Unavailable("embedded channel is closed");
    queue_.push_back(Delivery{payload, properties, 1, "embedded-" + std::to_string(++published_)});
    ready_.Signal();
    return Status::Ok();
  }

  bool ConsumeOne(std::chrono::milliseconds wait,
                  const std::function<DeliveryOutcome(const Delivery&)>& handler) override {
    std::optional<Delivery> delivery = Pop(Queue::kCommands, wait);
    if (!delivery) return false;
    if (handler(*delivery) == DeliveryOutcome::kReject) Requeue(std::move(*delivery));
    return true;
  }

  bool ConsumeDeadLetter(std::chrono::milliseconds wait,
                         const std::function<DeliveryOutcome(const Delivery&)>& handler) override {
    std::optional<Delivery> delivery = Pop(Queue::kDeadLetters, wait);
    if (!delivery) return false;
    if (handler(*delivery) == DeliveryOutcome::kReject) {
      // Not recorded by the handler: a dead letter is never dropped.
      MutexLock lock(&mu_);
      dead_letters_.push_back(std::move(*delivery));
      ready_.SignalAll();
    }
    return true;
  }

  void Close() override {
    MutexLock lock(&mu_);
    closed_ = true;
    ready_.SignalAll();
  }

 private:
  enum class Queue { kCommands, kDeadLetters };

  // Takes the next delivery of `which`, waiting up to `wait` for one. The
  // queue is named, not passed by reference, so the analysis sees every
  // access to the guarded deques under mu_.
  std::optional<Delivery> Pop(Queue which, std::chrono::milliseconds wait) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    std::deque<Delivery>& from = which == Queue::kCommands ? queue_ : dead_letters_;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!closed_ && from.empty() && ready_.WaitUntil(&mu_, deadline)) {
    }
    if (closed_ || from.empty()) return std::nullopt;
    Delivery d = std::move(from.front());
    from.pop_front();
    return d;
  }

  // A rejected (undecodable) command is redelivered until the limit, then
  // dead-lettered; it is never silently dropped.
  void Requeue(Delivery delivery) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (delivery.delivery_count >= delivery_limit_) {
      dead_letters_.push_back(std::move(delivery));
    } else {
      ++delivery.delivery_count;
      queue_.push_back(std::move(delivery));
    }
    ready_.SignalAll();
  }

  const int delivery_limit_;
  Mutex mu_;
  CondVar ready_;
  std::deque<Delivery> queue_ GUARDED_BY(mu_);
  std::deque<Delivery> dead_letters_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  int64_t published_ GUARDED_BY(mu_) = 0;
};

}  // namespace

std::unique_ptr<CommandChannel> NewEmbeddedCommandChannel(int delivery_limit) {
  return std::make_unique<EmbeddedCommandChannel>(delivery_limit);
}

}  // namespace export_center::dispatch
