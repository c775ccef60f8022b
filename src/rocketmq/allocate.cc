#include "rocketmq/allocate.h"

#include <algorithm>

namespace export_center::rocketmq {

std::vector<MessageQueue> AllocateAveragely(const std::vector<MessageQueue>& queues,
                                            const std::vector<std::string>& client_ids,
                                            const std::string& client_id) {
  std::vector<MessageQueue> mine;
  auto it = std::find(client_ids.begin(), client_ids.end(), client_id);
  if (it == client_ids.end() || queues.empty()) return mine;
  const size_t index = static_cast<size_t>(it - client_ids.begin());
  const size_t n_queues = queues.size();
  const size_t n_clients = client_ids.size();
  const size_t mod = n_queues % n_clients;
  const size_t average = n_queues <= n_clients      ? 1
                         : (mod > 0 && index < mod) ? n_queues / n_clients + 1
                                                    : n_queues / n_clients;
  const size_t start = (mod > 0 && index < mod) ? index * average : index * average + mod;
  const size_t range = start < n_queues ? std::min(average, n_queues - start) : 0;
  for (size_t i = 0; i < range; ++i) mine.push_back(queues[(start + i) % n_queues]);
  return mine;
}

}  // namespace export_center::rocketmq
