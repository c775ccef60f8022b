// The merged-run tracking of xlsx_merged_runs.h.
#include "render/xlsx_merged_runs.h"

#include <charconv>
#include <utility>
#include <variant>

namespace export_center::render::internal {
namespace {

// Whether two adjacent cells continue one merged run: same type and value;
// null and "" never merge (a blank run is not a group).
bool SameValue(const task::CellValue& a, const task::CellValue& b) {
  if (a.index() != b.index()) return false;
  switch (a.index()) {
    case 1: {
      const std::string& s = *std::get_if<std::string>(&a);
      return !s.empty() && s == *std::get_if<std::string>(&b);
    }
    case 2:
      return *std::get_if<int64_t>(&a) == *std::get_if<int64_t>(&b);
    case 3:
      return std::get_if<task::Decimal>(&a)->digits == std::get_if<task::Decimal>(&b)->digits;
    case 4:
      return *std::get_if<bool>(&a) == *std::get_if<bool>(&b);
    case 5: {
      return *std::get_if<task::Date>(&a) == *std::get_if<task::Date>(&b);
    }
    case 6:
      return std::get_if<task::DateTime>(&a)->epoch_ms == std::get_if<task::DateTime>(&b)->epoch_ms;
    default:
      return false;
  }
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

uint64_t GetVarint(const std::string& in, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0; *pos < in.size(); shift += 7) {
    const auto b = static_cast<unsigned char>(in[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (b < 0x80) break;
  }
  return v;
}

void AppendRowNumber(int64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

}  // namespace

void MergedRuns::Build(const std::vector<task::Column>& columns) {
  std::vector<int> run_of(columns.size(), -1);
  std::vector<char> tracked(columns.size(), 0);
  // A merged column and its mergeWithin parent (an earlier column) are tracked.
  for (size_t i = 0; i < columns.size(); ++i) {
    const task::Column& c = columns[i];
    if (c.merge == task::MergeMode::kNone) continue;
    tracked[i] = 1;
    for (size_t j = 0; j < i; ++j) {
      if (columns[j].key == c.merge_within) tracked[j] = 1;
    }
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    if (!tracked[i]) continue;
    Run run{.col = i, .merged = columns[i].merge != task::MergeMode::kNone};
    const std::string& parent = columns[i].merge_within;
    for (size_t j = 0; j < i && !parent.empty(); ++j) {
      if (columns[j].key == parent) run.parent = run_of[j];
    }
    run_of[i] = static_cast<int>(runs_.size());
    runs_.push_back(std::move(run));
  }
  skip_.assign(columns.size(), 0);
}

void MergedRuns::Mark(const task::Row& row, int64_t sheet_row) {
  for (Run& run : runs_) {
    const bool parent_break = run.parent >= 0 && runs_[run.parent].brk;
    run.brk = sheet_row == 0 || parent_break || !SameValue(run.prev, row[run.col]);
    skip_[run.col] = run.merged && !run.brk;
  }
}

void MergedRuns::Commit(const task::Row& row, int64_t sheet_row) {
  for (Run& run : runs_) {
    if (!run.brk) continue;
    if (sheet_row > 0) CloseRun(&run, sheet_row - 1);
    run.start = sheet_row;
    run.prev = row[run.col];
  }
}

void MergedRuns::CloseSheet(int64_t sheet_rows) {
  for (Run& run : runs_) {
    if (sheet_rows > 0) CloseRun(&run, sheet_rows - 1);
  }
}

int64_t MergedRuns::count() const {
  int64_t count = 0;
  for (const Run& run : runs_) count += run.count;
  return count;
}

Status MergedRuns::AppendMergeCells(const std::vector<std::string>& letters, int64_t first_data_row,
                                    std::string* out, const std::function<Status()>& flush) const {
  for (const Run& run : runs_) {
    size_t pos = 0;
    int64_t end = 0;
    while (pos < run.list.size()) {
      const int64_t first = end + static_cast<int64_t>(GetVarint(run.list, &pos));
      const int64_t last = first + static_cast<int64_t>(GetVarint(run.list, &pos)) + 1;
      end = last + 1;
      *out += "<mergeCell ref=\"";
      *out += letters[run.col];
      AppendRowNumber(first + first_data_row, out);
      *out += ':';
      *out += letters[run.col];
      AppendRowNumber(last + first_data_row, out);
      *out += "\"/>";
      EC_RETURN_IF_ERROR(flush());
    }
  }
  return Status::Ok();
}

void MergedRuns::ClearSheet() {
  for (Run& run : runs_) {
    run.list.clear();
    run.last_end = 0;
    run.count = 0;
  }
}

void MergedRuns::CloseRun(Run* run, int64_t last) {
  const int64_t length = last - run->start + 1;
  if (!run->merged || length < 2) return;
  PutVarint(static_cast<uint64_t>(run->start - run->last_end), &run->list);
  PutVarint(static_cast<uint64_t>(length - 2), &run->list);
  run->last_end = last + 1;
  run->start = last + 1;
  ++run->count;
}

}  // namespace export_center::render::internal
