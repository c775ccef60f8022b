#include "common/backoff.h"

#include <algorithm>

namespace export_center {
namespace {

int64_t StepMs(const std::vector<int>& steps_seconds, int attempt) {
  if (steps_seconds.empty()) return 0;
  size_t index = static_cast<size_t>(std::max(attempt, 1) - 1);
  index = std::min(index, steps_seconds.size() - 1);
  return static_cast<int64_t>(steps_seconds[index]) * 1000;
}

}  // namespace

int64_t OutboxBackoffMs(const std::vector<int>& steps_seconds, int attempt) {
  return StepMs(steps_seconds, attempt);
}

int64_t RetryBackoffMs(const std::vector<int>& steps_seconds, int attempt, double unit_random) {
  const double jitter = 0.8 + 0.4 * std::clamp(unit_random, 0.0, 1.0);
  return static_cast<int64_t>(static_cast<double>(StepMs(steps_seconds, attempt)) * jitter);
}

}  // namespace export_center
