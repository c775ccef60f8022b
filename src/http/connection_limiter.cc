#include "http/connection_limiter.h"

#include <arpa/inet.h>

#include <cstring>

namespace export_center::http {

ConnectionLimiter::ConnectionLimiter(int max_total, int max_per_address)
    : max_total_(max_total), max_per_address_(max_per_address) {}

std::string ConnectionLimiter::KeyOf(const std::string& address) {
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) != 1) return address;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) return address;
  std::memset(&v6.s6_addr[8], 0, 8);
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, &v6, text, sizeof text);
  return std::string(text) + "/64";
}

bool ConnectionLimiter::TryAcquire(const std::string& key) {
  MutexLock lock(&mu_);
  if (total_ >= max_total_) return false;
  int& n = per_key_[key];
  if (n >= max_per_address_) return false;
  ++n;
  ++total_;
  return true;
}

void ConnectionLimiter::Release(const std::string& key) {
  MutexLock lock(&mu_);
  auto it = per_key_.find(key);
  if (it == per_key_.end()) return;
  --total_;
  if (--it->second == 0) per_key_.erase(it);
}

int ConnectionLimiter::open() const {
  MutexLock lock(&mu_);
  return total_;
}

}  // namespace export_center::http
