#pragma once
// DemoConsole: what `export-center demo` prints, for a newcomer reading it —
// one numbered line per step and a progress bar per export, nothing per HTTP
// request (the demo writes its log to a file; see RedirectDemoLog).
//
// On a terminal the bar redraws in place; elsewhere (a pipe, a CI log) it
// prints a line at each quarter, so a captured run stays short and readable.
// Used by the demo's one thread only.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace export_center::app {

class DemoConsole {
 public:
  DemoConsole(std::ostream& out, int total_steps, bool redraw_in_place);

  // "[n/total] what..." — starts the next step.
  void Step(const std::string& what);
  // An indented line under the current step ("    file: ...").
  void Detail(const std::string& text);
  // Redraws the current export's bar. `percent` is nullopt while the total is unknown.
  void Progress(std::optional<int> percent, const std::string& rows);
  // Ends the bar at 100 % with a summary ("6000 rows, 181 KB in 1.2 s").
  void FinishProgress(const std::string& summary);

  // "[###########---------]  55 %": `width` cells, for tests and the redraw.
  static std::string Bar(std::optional<int> percent, int width = 30);
  // 1234567 → "1.2 MB"; below 1 KB in bytes.
  static std::string HumanBytes(int64_t bytes);

 private:
  void DrawBar(const std::string& bar_line);

  std::ostream& out_;
  const int total_steps_;
  const bool redraw_in_place_;
  int step_ = 0;
  int last_quarter_printed_ = -1;  // pipes: the last quarter a line was printed for
  bool bar_open_ = false;          // terminal: the cursor is at the end of a bar line
};

// Sends spdlog's output to `log_path` (every line at the configured level)
// and only warnings and errors to stderr, so the console keeps its steps.
// Returns the path actually used, or an empty string when the file could
// not be opened (then logging stays as it was).
std::string RedirectDemoLog(const std::string& log_path);

}  // namespace export_center::app
