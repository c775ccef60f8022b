#include "sdk/refusal_log.h"

#include <cstdio>
#include <utility>

namespace export_center::sdk {

RefusalLog::RefusalLog(Sink sink, std::chrono::steady_clock::duration interval, Clock clock)
    : sink_(std::move(sink)), interval_(interval), clock_(std::move(clock)) {
  if (!sink_) {
    sink_ = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  }
  if (!clock_) clock_ = [] { return std::chrono::steady_clock::now(); };
}

void RefusalLog::Refused(std::string_view what) {
  std::string line;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto now = clock_();
    if (logged_ && now < next_) {
      ++held_back_;
      return;
    }
    line = "export-center sdk: refused contract call: " + std::string(what);
    if (held_back_ > 0) {
      line += " (" + std::to_string(held_back_) + " more refused since the last line, not logged)";
    }
    held_back_ = 0;
    logged_ = true;
    next_ = now + interval_;
  }
  sink_(line);  // outside the lock: a slow sink must not hold other server threads
}

}  // namespace export_center::sdk
