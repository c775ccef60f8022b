#include "rocketmq/broker_fault_tracker.h"

#include <algorithm>

namespace export_center::rocketmq {

BrokerFaultTracker::BrokerFaultTracker(BrokerFaultOptions options,
                                       std::function<Clock::time_point()> now)
    : options_(options), now_(std::move(now)) {}

std::optional<MessageQueue> BrokerFaultTracker::Pick(const std::vector<MessageQueue>& queues,
                                                     uint64_t start,
                                                     const std::string& avoid) const {
  if (queues.empty()) return std::nullopt;
  const Clock::time_point now = now_();
  MutexLock lock(&mu_);
  auto at = [&](size_t i) -> const MessageQueue& { return queues[(start + i) % queues.size()]; };
  for (size_t i = 0; i < queues.size(); ++i) {
    if (at(i).broker_name != avoid && !IsolatedLocked(at(i).broker_name, now)) return at(i);
  }
  for (size_t i = 0; i < queues.size(); ++i) {
    if (!IsolatedLocked(at(i).broker_name, now)) return at(i);
  }
  // Every broker is isolated: the one that failed longest ago first.
  const MessageQueue* best = &at(0);
  for (size_t i = 1; i < queues.size(); ++i) {
    if (faults_.at(at(i).broker_name).failed_at < faults_.at(best->broker_name).failed_at) {
      best = &at(i);
    }
  }
  return *best;
}

std::chrono::milliseconds BrokerFaultTracker::AttemptTimeout(
    const std::vector<MessageQueue>& queues, const std::string& broker,
    std::chrono::milliseconds remaining) const {
  const Clock::time_point now = now_();
  MutexLock lock(&mu_);
  // A plain loop, not std::any_of: the analysis cannot see that a lambda
  // runs with mu_ held.
  for (const MessageQueue& q : queues) {
    if (q.broker_name != broker && !IsolatedLocked(q.broker_name, now)) return remaining / 2;
  }
  return remaining;
}

void BrokerFaultTracker::Failed(const std::string& broker) {
  const Clock::time_point now = now_();
  MutexLock lock(&mu_);
  auto [it, fresh] = faults_.try_emplace(broker);
  Fault& f = it->second;
  // A failure while still isolated (every broker was) or soon after the
  // isolation ended means the broker is still down: isolate it for longer.
  // Long after, it is a new fault and starts over.
  const bool repeated = !fresh && now < f.isolated_until + options_.isolation_max;
  f.isolation =
      repeated ? std::min(f.isolation * 2, options_.isolation_max) : options_.isolation_min;
  f.failed_at = now;
  f.isolated_until = now + f.isolation;
}

void BrokerFaultTracker::Succeeded(const std::string& broker) {
  MutexLock lock(&mu_);
  faults_.erase(broker);
}

bool BrokerFaultTracker::Isolated(const std::string& broker) const {
  const Clock::time_point now = now_();
  MutexLock lock(&mu_);
  return IsolatedLocked(broker, now);
}

bool BrokerFaultTracker::IsolatedLocked(const std::string& broker, Clock::time_point now) const {
  auto it = faults_.find(broker);
  return it != faults_.end() && now < it->second.isolated_until;
}

}  // namespace export_center::rocketmq
