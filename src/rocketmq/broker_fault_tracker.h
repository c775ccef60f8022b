#pragma once
// BrokerFaultTracker (internal to rocketmq/): the producer's memory of
// brokers that failed to answer, so that a hanging broker (accepts
// connections, never answers: GC pause, disk stall, SIGSTOP) costs one
// attempt, not every other send. The idea is the Java client's latency fault
// tolerance (sendLatencyFaultEnable); the policy is ours (docs/rocketmq.md#producer):
//
// - A send that failed for a connection or timeout reason isolates its
//   broker for `isolation_min`, doubling while failures repeat, up to
//   `isolation_max`. A refused message does not count: the broker answered.
// - A success clears the broker's record.
// - Queues are chosen among the brokers that are not isolated; when every
//   broker with writable queues is isolated, the least recently failed one is
//   tried first (it is the likeliest to be back).
// - An attempt gets at most half the remaining deadline while another broker
//   could take the retry, so a hanging broker cannot eat the retry's time; a
//   single-broker route keeps the whole deadline.
//
// Thread-safe: Send() calls it from any thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "rocketmq/message.h"

namespace export_center::rocketmq {

struct BrokerFaultOptions {
  std::chrono::milliseconds isolation_min{30000};
  std::chrono::milliseconds isolation_max{300000};
};

class BrokerFaultTracker {
 public:
  using Clock = std::chrono::steady_clock;
  // `now` is the clock (a fake one in tests).
  explicit BrokerFaultTracker(BrokerFaultOptions options,
                              std::function<Clock::time_point()> now = Clock::now);

  // The queue to try next: the first of `queues` from `start` on (wrapping)
  // whose broker is neither `avoid` (the broker that just failed) nor
  // isolated; else the first whose broker is not isolated; else the first of
  // the least recently failed broker. nullopt when `queues` is empty.
  std::optional<MessageQueue> Pick(const std::vector<MessageQueue>& queues, uint64_t start,
                                   const std::string& avoid) const;

  // How long an attempt on `broker` may take out of `remaining`: half of it
  // when another broker of `queues` is not isolated, else all of it.
  std::chrono::milliseconds AttemptTimeout(const std::vector<MessageQueue>& queues,
                                           const std::string& broker,
                                           std::chrono::milliseconds remaining) const;

  // The broker did not answer (connect failure, lost connection, timeout).
  void Failed(const std::string& broker);
  // The broker stored a message: forget its failures.
  void Succeeded(const std::string& broker);

  // Whether `broker` is isolated now.
  bool Isolated(const std::string& broker) const;

 private:
  struct Fault {
    Clock::time_point failed_at;
    Clock::time_point isolated_until;
    std::chrono::milliseconds isolation{0};
  };
  bool IsolatedLocked(const std::string& broker, Clock::time_point now) const REQUIRES(mu_);

  const BrokerFaultOptions options_;
  const std::function<Clock::time_point()> now_;
  mutable Mutex mu_;
  std::map<std::string, Fault> faults_ GUARDED_BY(mu_);
};

}  // namespace export_center::rocketmq
