#pragma once
// ConnectionLimiter: the caps on open connections, in total and per client
// address, so that one client (or one NAT) cannot hold every socket.
//
// An IPv6 address counts by its /64 prefix, since one host usually holds a
// whole /64; IPv4 (and IPv4-mapped IPv6) addresses count one by one.
// Thread-safe.

#include <map>
#include <string>

#include "common/mutex.h"

namespace export_center::http {

class ConnectionLimiter {
 public:
  ConnectionLimiter(int max_total, int max_per_address);

  // The key `address` counts under ("" for an unparsable address).
  static std::string KeyOf(const std::string& address);
  // Takes a slot for `key`; false (nothing taken) when a cap is reached.
  bool TryAcquire(const std::string& key);
  // Gives back a slot taken by TryAcquire.
  void Release(const std::string& key);
  int open() const;

 private:
  const int max_total_;
  const int max_per_address_;
  mutable Mutex mu_;
  int total_ GUARDED_BY(mu_) = 0;
  std::map<std::string, int> per_key_ GUARDED_BY(mu_);
};

}  // namespace export_center::http
