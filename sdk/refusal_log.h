#pragma once
// RefusalLog: one log line per refused contract call (a missing or wrong
// X-Internal-Service-Token), at most one line per interval, so a scanner or a
// misconfigured caller cannot flood the service's log; the calls it held back
// are counted in the next line. Thread-safe (server threads call Refused).

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace export_center::sdk {

class RefusalLog {
 public:
  using Sink = std::function<void(const std::string& line)>;
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `sink` null: one line on stderr. `clock` null: steady_clock (tests inject one).
  explicit RefusalLog(Sink sink = nullptr,
                      std::chrono::steady_clock::duration interval = std::chrono::seconds(10),
                      Clock clock = nullptr);
  RefusalLog(const RefusalLog&) = delete;
  RefusalLog& operator=(const RefusalLog&) = delete;

  // Logs "refused contract call: WHAT", or counts it when a line went out
  // less than an interval ago; the next line says how many were held back.
  // WHAT (the caller's method and path) is written with control bytes as
  // \xNN and cut at 300 bytes, between characters: always one line.
  void Refused(std::string_view what);

 private:
  Sink sink_;
  std::chrono::steady_clock::duration interval_;
  Clock clock_;
  std::mutex mu_;
  bool logged_ = false;                           // guarded by mu_
  std::chrono::steady_clock::time_point next_{};  // guarded by mu_
  int64_t held_back_ = 0;                         // guarded by mu_
};

}  // namespace export_center::sdk
