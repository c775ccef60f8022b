#include "task/task.h"

#include <array>
#include <utility>

namespace export_center::task {
namespace {

constexpr std::array<std::pair<TaskState, std::string_view>, 8> kStateNames = {{
    {TaskState::kPending, "PENDING"},
    {TaskState::kRunning, "RUNNING"},
    {TaskState::kSucceeded, "SUCCEEDED"},
    {TaskState::kFailed, "FAILED"},
    {TaskState::kCancelled, "CANCELLED"},
    {TaskState::kExpired, "EXPIRED"},
    {TaskState::kStale, "STALE"},
    {TaskState::kInconsistent, "INCONSISTENT"},
}};

}  // namespace

std::string_view ToString(TaskState state) {
  for (const auto& [s, name] : kStateNames) {
    if (s == state) return name;
  }
  return "UNKNOWN";
}

std::optional<TaskState> ParseTaskState(std::string_view text) {
  for (const auto& [s, name] : kStateNames) {
    if (name == text) return s;
  }
  return std::nullopt;
}

bool IsActive(TaskState state) {
  return state == TaskState::kPending || state == TaskState::kRunning;
}

// Not STALE: a retry keeps the contract version recorded at create and
// would end STALE again; such a task is exported again as a new task.
bool CanManualRetry(TaskState state) {
  return state == TaskState::kFailed || state == TaskState::kCancelled ||
         state == TaskState::kInconsistent;
}

bool IsAllowedTransition(TaskState from, TaskState to) {
  for (const Transition& t : kTransitions) {
    if (t.from == from && t.to == to) return true;
  }
  return false;
}

std::string_view ToString(FileFormat format) { return format == FileFormat::kCsv ? "CSV" : "XLSX"; }

std::optional<FileFormat> ParseFileFormat(std::string_view text) {
  if (text == "XLSX") return FileFormat::kXlsx;
  if (text == "CSV") return FileFormat::kCsv;
  return std::nullopt;
}

std::string_view FileExtension(FileFormat format) {
  return format == FileFormat::kCsv ? "csv" : "xlsx";
}

std::string_view ContentType(FileFormat format) {
  return format == FileFormat::kCsv
             ? "text/csv; charset=utf-8"
             : "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
}

std::string_view ToString(AppCode app) {
  return app == AppCode::kMerchant ? "MERCHANT" : "PLATFORM";
}

std::optional<AppCode> ParseAppCode(std::string_view text) {
  if (text == "PLATFORM") return AppCode::kPlatform;
  if (text == "MERCHANT") return AppCode::kMerchant;
  return std::nullopt;
}

bool IsLocaleTag(std::string_view tag) {
  if (tag.empty() || tag.size() > kMaxLocaleLength) return false;
  size_t start = 0;
  bool first = true;
  while (start <= tag.size()) {
    size_t end = tag.find('-', start);
    if (end == std::string_view::npos) end = tag.size();
    const std::string_view subtag = tag.substr(start, end - start);
    if (subtag.empty() || subtag.size() > 8) return false;
    for (char c : subtag) {
      const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      const bool digit = c >= '0' && c <= '9';
      if (!letter && !(digit && !first)) return false;
    }
    if (first && subtag.size() < 2) return false;
    first = false;
    start = end + 1;
  }
  return true;
}

}  // namespace export_center::task
