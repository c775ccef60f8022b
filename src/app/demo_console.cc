#include "app/demo_console.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>

namespace export_center::app {

DemoConsole::DemoConsole(std::ostream& out, int total_steps, bool redraw_in_place)
    : out_(out), total_steps_(total_steps), redraw_in_place_(redraw_in_place) {}

void DemoConsole::Step(const std::string& what) {
  if (bar_open_) out_ << "\n";
  bar_open_ = false;
  last_quarter_printed_ = -1;
  out_ << "[" << ++step_ << "/" << total_steps_ << "] " << what << std::endl;
}

void DemoConsole::Detail(const std::string& text) {
  if (bar_open_) out_ << "\n";
  bar_open_ = false;
  out_ << "      " << text << std::endl;
}

std::string DemoConsole::Bar(std::optional<int> percent, int width) {
  const int pct = std::clamp(percent.value_or(0), 0, 100);
  const int filled = pct * width / 100;
  char number[16];
  std::snprintf(number, sizeof number, "%3d %%", pct);
  return "[" + std::string(filled, '#') + std::string(width - filled, '-') + "] " +
         (percent ? std::string(number) : std::string("  ? %"));
}

std::string DemoConsole::HumanBytes(int64_t bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 3) value /= 1024, ++unit;
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  }
  return text;
}

void DemoConsole::DrawBar(const std::string& bar_line) {
  // \x1b[K clears what a longer previous line left to the right.
  out_ << "\r      " << bar_line << "\x1b[K" << std::flush;
  bar_open_ = true;
}

void DemoConsole::Progress(std::optional<int> percent, const std::string& rows) {
  const std::string line = Bar(percent) + "  " + rows;
  if (redraw_in_place_) return DrawBar(line);
  // A pipe gets a line per quarter reached, not one per poll.
  const int quarter = percent ? *percent / 25 : -1;
  if (quarter <= last_quarter_printed_ || quarter >= 4) return;
  last_quarter_printed_ = quarter;
  out_ << "      " << line << std::endl;
}

void DemoConsole::FinishProgress(const std::string& summary) {
  const std::string line = Bar(100) + "  " + summary;
  if (redraw_in_place_) {
    DrawBar(line);
    out_ << std::endl;
  } else {
    out_ << "      " << line << std::endl;
  }
  bar_open_ = false;
}

std::string RedirectDemoLog(const std::string& log_path) {
  try {
    std::error_code ec;
    const auto parent = std::filesystem::path(log_path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_path, /*truncate=*/true);
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    console->set_level(spdlog::level::warn);
    auto logger = std::make_shared<spdlog::logger>(
        "export-center", spdlog::sinks_init_list{std::move(file), std::move(console)});
    logger->set_level(spdlog::default_logger()->level());
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(std::move(logger));
    return log_path;
  } catch (const spdlog::spdlog_ex& e) {
    // The console keeps the log then: noisier, but nothing is lost.
    spdlog::warn("demo log file {} not opened ({}); logging to the console", log_path, e.what());
    return std::string();
  }
}

}  // namespace export_center::app
