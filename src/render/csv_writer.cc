#include "render/csv_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "render/cell_text.h"
#include "render/column_total.h"
#include "render/gzip_sink.h"
#include "render/out_buffer.h"

namespace export_center::render {
namespace {

// Large appends: the sink (a file, a counting wrapper, gzip) is called once
// per 256 KiB rather than per row.
constexpr size_t kFlushBytes = 256 * 1024;
constexpr std::string_view kBom = "\xEF\xBB\xBF";

// What a byte means inside a text field.
enum ByteClass : uint8_t {
  kPlain = 0,   // copied as is
  kQuotes = 1,  // , " CR LF: the field must be quoted
  kLead = 2,    // starts a multi-byte UTF-8 sequence: validate it
  kClean = 3,   // a control character or a stray byte: CleanText must run
};

constexpr std::array<uint8_t, 256> MakeClasses() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if (c == ',' || c == '"' || c == '\r' || c == '\n') {
      t[c] = kQuotes;
    } else if (c == '\t' || (c >= 0x20 && c <= 0x7F)) {
      t[c] = kPlain;
    } else if (c >= 0xC2 && c <= 0xF4) {
      t[c] = kLead;
    } else {
      t[c] = kClean;
    }
  }
  return t;
}
constexpr std::array<uint8_t, 256> kClasses = MakeClasses();

// Whether any of the 8 bytes of w is not plain printable ASCII, a comma or a
// quote (SWAR; tab, CR and LF fall to the byte loop, which handles them).
inline bool WordNeedsLook(uint64_t w) {
  constexpr uint64_t k01 = 0x0101010101010101ULL;
  constexpr uint64_t k20 = 0x2020202020202020ULL;
  constexpr uint64_t k80 = 0x8080808080808080ULL;
  const auto has_byte = [&](uint64_t c) {
    const uint64_t v = w ^ (k01 * c);
    return (v - k01) & ~v & k80;
  };
  return ((((w - k20) | w) & k80) | has_byte(',') | has_byte('"')) != 0;
}

// Scans `text`; returns false if CleanText would change it, else sets *quote.
bool ScanField(std::string_view text, bool* quote) {
  *quote = false;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, text.data() + i, 8);
      if (!WordNeedsLook(w)) {
        i += 8;
        continue;
      }
    }
    switch (kClasses[static_cast<unsigned char>(text[i])]) {
      case kPlain:
        ++i;
        break;
      case kQuotes:
        *quote = true;
        ++i;
        break;
      case kLead: {
        const size_t len = internal::CleanSequenceLength(text, i);
        if (len == 0) return false;
        i += len;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

bool HasQuoteTrigger(std::string_view text) {
  for (char c : text) {
    if (kClasses[static_cast<unsigned char>(c)] == kQuotes) return true;
  }
  return false;
}

// -?digits(.digits)? : ParseDecimal's canonical form.
bool IsPlainNumber(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

class CsvWriter final : public Writer {
 public:
  CsvWriter(ByteSink* sink, const WriterOptions& options)
      : options_(options), out_(sink), buf_(kFlushBytes + 4096) {
    if (options_.csv_gzip) {
      gzip_.emplace(sink, options_.deflate_level);
      out_ = &*gzip_;
    }
  }

  Status Begin(const std::vector<task::Column>& columns) override;
  Status WriteRow(const task::Row& row) override;
  StatusOr<WriteSummary> Finish() override;

 private:
  enum class State { kNew, kWriting, kDone };

  Status Check(Status s) {
    if (!s.ok() && status_.ok()) status_ = s;
    return s;
  }
  void AppendText(std::string_view text);
  Status AppendValue(size_t col, const task::CellValue& value);
  void AppendDateTime(int64_t epoch_ms);
  void AppendTotalsRow();
  Status Flush();

  WriterOptions options_;
  ByteSink* out_;
  std::optional<internal::GzipSink> gzip_;
  internal::LocalClock clock_;
  internal::DateTextCache dates_;
  State state_ = State::kNew;
  Status status_;
  std::vector<task::Column> columns_;
  std::vector<std::pair<size_t, internal::ColumnTotal>> totals_;
  int64_t rows_ = 0;
  internal::OutBuffer buf_;
  std::string scratch_;
};

Status CsvWriter::Begin(const std::vector<task::Column>& columns) {
  if (state_ != State::kNew) return Check(Internal("csv: Begin called twice"));
  if (columns.empty()) return Check(InvalidArgument("csv: no columns"));
  EC_RETURN_IF_ERROR(Check(clock_.Init(options_.timezone)));
  columns_ = columns;
  state_ = State::kWriting;
  buf_.Append(kBom);
  // One header row per title level (docs/xlsx.md#csv): a group level is
  // repeated in every column it spans, and every column's last level is in
  // the last header row, so that row alone names every column.
  int depth = 1;
  for (const task::Column& c : columns_) depth = std::max(depth, std::min(task::TitleDepth(c), 5));
  for (int r = 0; r < depth; ++r) {
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) buf_.Push(',');
      const int d = std::min(task::TitleDepth(columns_[i]), depth);
      if (r == depth - 1) {
        AppendText(columns_[i].title);
      } else if (r < d - 1) {
        AppendText(task::TitleLevel(columns_[i], r));
      }
    }
    buf_.Append("\r\n");
  }
  for (size_t i = 0; i < columns_.size(); ++i) {
    const task::Column& c = columns_[i];
    if (c.total == task::TotalKind::kNone) continue;
    totals_.emplace_back(i, internal::ColumnTotal::For(c));
  }
  return Status::Ok();
}

// RFC 4180: a field holding a comma, quote, CR or LF is quoted, quotes doubled.
void CsvWriter::AppendText(std::string_view text) {
  bool quote;
  std::string_view clean = text;
  if (!ScanField(text, &quote)) {
    clean = internal::CleanText(text, &scratch_);
    quote = HasQuoteTrigger(clean);
  }
  const bool guard = internal::NeedsFormulaGuard(clean);
  char* p = buf_.Reserve(clean.size() * 2 + 3);
  if (quote) *p++ = '"';
  if (guard) *p++ = '\'';
  if (!quote) {
    std::memcpy(p, clean.data(), clean.size());
    p += clean.size();
  } else {
    for (char c : clean) {
      if (c == '"') *p++ = '"';
      *p++ = c;
    }
    *p++ = '"';
  }
  buf_.Commit(p);
}

void CsvWriter::AppendDateTime(int64_t epoch_ms) {
  int64_t days, ms;
  clock_.Split(epoch_ms, &days, &ms);
  char* p = buf_.Reserve(19);
  char* end = dates_.Put(days, p);
  if (end == nullptr) {  // a year beyond 0..9999: rare, the slow path
    scratch_.clear();
    internal::AppendIsoDateTime(days, ms, &scratch_);
    buf_.Append(scratch_);
    return;
  }
  *end++ = ' ';
  buf_.Commit(internal::PutTimeOfDay(ms, end));
}

Status CsvWriter::AppendValue(size_t col, const task::CellValue& value) {
  switch (value.index()) {
    case 1:
      AppendText(*std::get_if<std::string>(&value));
      break;
    case 2: {
      char* p = buf_.Reserve(24);
      buf_.Commit(std::to_chars(p, p + 24, *std::get_if<int64_t>(&value)).ptr);
      break;
    }
    case 3: {
      // A stray comma or quote would shift columns, so anything but digits
      // goes through the quoting path.
      const std::string& digits = std::get_if<task::Decimal>(&value)->digits;
      if (IsPlainNumber(digits)) {
        buf_.Append(digits);
      } else {
        AppendText(digits);
      }
      break;
    }
    case 4:
      buf_.Append(*std::get_if<bool>(&value) ? "TRUE" : "FALSE");
      break;
    case 5: {
      char* p = buf_.Reserve(10);
      buf_.Commit(dates_.Put(std::get_if<task::Date>(&value)->days(), p));
      break;
    }
    case 6:
      AppendDateTime(std::get_if<task::DateTime>(&value)->epoch_ms);
      break;
    default:
      break;  // monostate: an empty field
  }
  return Status::Ok();
}

Status CsvWriter::WriteRow(const task::Row& row) {
  EC_RETURN_IF_ERROR(status_);
  if (state_ != State::kWriting) return Check(Internal("csv: WriteRow outside Begin/Finish"));
  if (row.size() != columns_.size()) {
    return InvalidArgument("csv: row has " + std::to_string(row.size()) + " values for " +
                           std::to_string(columns_.size()) + " columns");
  }
  const size_t mark = buf_.size();
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) buf_.Push(',');
    Status s = AppendValue(i, row[i]);
    if (!s.ok()) {
      buf_.Truncate(mark);  // a bad value leaves no half row behind
      return s;
    }
  }
  buf_.Append("\r\n");
  for (auto& [col, total] : totals_) total.Add(row[col]);
  ++rows_;
  return buf_.size() >= kFlushBytes ? Flush() : Status::Ok();
}

// The totals row after the data (docs/xlsx.md#totals): the label in the
// first column without a total, each total's exact value (empty when it is
// not defined: AVG of nothing, or an overflow).
void CsvWriter::AppendTotalsRow() {
  size_t next = 0;
  bool labelled = options_.totals_label.empty();
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (i > 0) buf_.Push(',');
    if (next < totals_.size() && totals_[next].first == i) {
      if (auto text = totals_[next].second.Text()) buf_.Append(*text);
      ++next;
    } else if (!labelled) {
      AppendText(options_.totals_label);
      labelled = true;
    }
  }
  buf_.Append("\r\n");
}

Status CsvWriter::Flush() {
  if (buf_.empty()) return Status::Ok();
  EC_RETURN_IF_ERROR(Check(out_->Append(buf_.view())));
  buf_.clear();
  return Status::Ok();
}

StatusOr<WriteSummary> CsvWriter::Finish() {
  EC_RETURN_IF_ERROR(status_);
  if (state_ != State::kWriting) return Check(Internal("csv: Finish without Begin"));
  state_ = State::kDone;
  if (!totals_.empty()) AppendTotalsRow();
  EC_RETURN_IF_ERROR(Flush());
  if (gzip_) EC_RETURN_IF_ERROR(Check(gzip_->Finish()));
  return WriteSummary{.rows = rows_, .truncated_cells = 0, .part_rows = {rows_}};
}

}  // namespace

std::unique_ptr<Writer> NewCsvWriter(ByteSink* sink, const WriterOptions& options) {
  return std::make_unique<CsvWriter>(sink, options);
}

}  // namespace export_center::render
