#include "render/csv_writer.h"

#include <charconv>
#include <string>
#include <variant>

#include "render/cell_text.h"

namespace export_center::render {
namespace {

constexpr size_t kFlushBytes = 64 * 1024;
constexpr std::string_view kBom = "\xEF\xBB\xBF";

class CsvWriter final : public Writer {
 public:
  CsvWriter(ByteSink* sink, const WriterOptions& options) : sink_(sink), options_(options) {}

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
  Status Flush();

  ByteSink* sink_;
  WriterOptions options_;
  internal::LocalClock clock_;
  State state_ = State::kNew;
  Status status_;
  std::vector<task::Column> columns_;
  int64_t rows_ = 0;
  std::string buf_;
  std::string scratch_;
};

Status CsvWriter::Begin(const std::vector<task::Column>& columns) {
  if (state_ != State::kNew) return Check(Internal("csv: Begin called twice"));
  if (columns.empty()) return Check(InvalidArgument("csv: no columns"));
  EC_RETURN_IF_ERROR(Check(clock_.Init(options_.timezone)));
  columns_ = columns;
  state_ = State::kWriting;
  buf_.reserve(kFlushBytes * 2);
  buf_ += kBom;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (i > 0) buf_ += ',';
    AppendText(columns_[i].title);
  }
  buf_ += "\r\n";
  return Status::Ok();
}

// RFC 4180: a field holding a comma, quote, CR or LF is quoted, quotes doubled.
void CsvWriter::AppendText(std::string_view text) {
  const std::string_view clean = internal::CleanText(text, &scratch_);
  const bool guard = internal::NeedsFormulaGuard(clean);
  const bool quote = clean.find_first_of(",\"\r\n") != std::string_view::npos;
  if (quote) buf_ += '"';
  if (guard) buf_ += '\'';
  if (!quote) {
    buf_ += clean;
  } else {
    for (char c : clean) {
      if (c == '"') buf_ += '"';
      buf_ += c;
    }
    buf_ += '"';
  }
}

Status CsvWriter::AppendValue(size_t col, const task::CellValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) {
    AppendText(*s);
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, *i);
    buf_.append(buf, r.ptr);
  } else if (const auto* d = std::get_if<task::Decimal>(&value)) {
    // Digits are ParseDecimal's canonical form; a stray comma or quote would
    // shift columns, so anything else goes through the quoting path.
    if (d->digits.find_first_not_of("-.0123456789") == std::string::npos) {
      buf_ += d->digits;
    } else {
      AppendText(d->digits);
    }
  } else if (const auto* b = std::get_if<bool>(&value)) {
    buf_ += *b ? "TRUE" : "FALSE";
  } else if (const auto* date = std::get_if<task::Date>(&value)) {
    if (!internal::IsValidDate(date->year, date->month, date->day)) {
      return InvalidArgument("csv: column " + columns_[col].key + ": bad date");
    }
    internal::AppendIsoDate(internal::DaysFromCivil(date->year, date->month, date->day), &buf_);
  } else if (const auto* dt = std::get_if<task::DateTime>(&value)) {
    int64_t days, ms;
    clock_.Split(dt->epoch_ms, &days, &ms);
    internal::AppendIsoDateTime(days, ms, &buf_);
  }
  return Status::Ok();  // monostate: an empty field
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
    if (i > 0) buf_ += ',';
    Status s = AppendValue(i, row[i]);
    if (!s.ok()) {
      buf_.resize(mark);
      return s;
    }
  }
  buf_ += "\r\n";
  ++rows_;
  return buf_.size() >= kFlushBytes ? Flush() : Status::Ok();
}

Status CsvWriter::Flush() {
  if (buf_.empty()) return Status::Ok();
  EC_RETURN_IF_ERROR(Check(sink_->Append(buf_)));
  buf_.clear();
  return Status::Ok();
}

StatusOr<WriteSummary> CsvWriter::Finish() {
  EC_RETURN_IF_ERROR(status_);
  if (state_ != State::kWriting) return Check(Internal("csv: Finish without Begin"));
  state_ = State::kDone;
  EC_RETURN_IF_ERROR(Flush());
  return WriteSummary{.rows = rows_, .truncated_cells = 0};
}

}  // namespace

std::unique_ptr<Writer> NewCsvWriter(ByteSink* sink, const WriterOptions& options) {
  return std::make_unique<CsvWriter>(sink, options);
}

}  // namespace export_center::render
