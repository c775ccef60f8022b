#include "sdk/refusal_log.h"

#include <cstdio>
#include <utility>

namespace export_center::sdk {
namespace {

// What a refused caller chose (its method and path, which the HTTP server has
// percent-decoded) is written as one bounded line: control bytes become \xNN
// so a %0A cannot forge a second log line, and past kMaxWhatBytes the text is
// cut between characters. By hand: the SDK links nothing of the center's.
constexpr size_t kMaxWhatBytes = 300;

std::string Loggable(std::string_view what) {
  std::string out;
  for (unsigned char c : what) {
    if (out.size() >= kMaxWhatBytes && (c & 0xC0) != 0x80) return out + "...";
    if (c < 0x20 || c == 0x7F) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

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
    line = "export-center sdk: refused contract call: " + Loggable(what);
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
