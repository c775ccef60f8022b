#include "render/xlsx_split_writer.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/json_dump.h"
#include "render/column_total.h"
#include "render/encryption/file_key_material.h"
#include "render/xlsx_writer.h"
#include "render/zip_stream.h"

namespace export_center::render {
namespace {

constexpr int64_t kMaxRowsPerFile = int64_t{1048575} * 16;

// Forwards an inner workbook's bytes into the open outer entry.
class EntrySink final : public ByteSink {
 public:
  explicit EntrySink(ZipStreamWriter* zip) : zip_(zip) {}
  Status Append(std::string_view bytes) override { return zip_->Write(bytes); }

 private:
  ZipStreamWriter* zip_;
};

// A password-protected split file: one WinZip AES key per entry
// (docs/xlsx.md#encrypted-files). Empty when the file is plain.
std::vector<encryption::ZipEntryKey> AesKeysOf(const WriterOptions& options, Status* status) {
  if (options.file_key_material == nullptr) return {};
  auto material = encryption::ParseFileKeyMaterial(*options.file_key_material);
  if (!material.ok()) {
    *status = Internal(material.status().message());
    return {};
  }
  return std::move(material->zip_keys);
}

class XlsxSplitWriter final : public Writer {
 public:
  XlsxSplitWriter(ByteSink* sink, const WriterOptions& options)
      : options_(options),
        aes_keys_(AesKeysOf(options, &status_)),
        zip_(sink, ZipOptions{.deflate_level = options.deflate_level,
                              .aes_entry_keys = aes_keys_.empty() ? nullptr : &aes_keys_}),
        entry_sink_(&zip_) {
    if (options_.rows_per_file <= 0) options_.rows_per_file = 1048575;
    options_.rows_per_file = std::min(options_.rows_per_file, kMaxRowsPerFile);
    if (options_.split_file_stem.empty()) options_.split_file_stem = "export";
  }

  ~XlsxSplitWriter() override {
    for (encryption::ZipEntryKey& k : aes_keys_) {
      OPENSSL_cleanse(k.aes_key.data(), k.aes_key.size());
      OPENSSL_cleanse(k.hmac_key.data(), k.hmac_key.size());
    }
  }

  Status Begin(const std::vector<task::Column>& columns) override {
    EC_RETURN_IF_ERROR(status_);
    if (state_ != State::kNew) return Check(Internal("xlsx split: Begin called twice"));
    if (columns.empty()) return Check(InvalidArgument("xlsx split: no columns"));
    columns_ = columns;
    for (size_t i = 0; i < columns_.size(); ++i) {
      const task::Column& c = columns_[i];
      if (c.total == task::TotalKind::kNone) continue;
      totals_.emplace_back(i, internal::ColumnTotal::For(c));
    }
    state_ = State::kWriting;
    return Check(StartFile());
  }

  Status WriteRow(const task::Row& row) override {
    EC_RETURN_IF_ERROR(status_);
    if (state_ != State::kWriting) return Check(Internal("xlsx split: WriteRow out of order"));
    if (file_rows_ == options_.rows_per_file) {
      EC_RETURN_IF_ERROR(Check(EndFile()));
      EC_RETURN_IF_ERROR(Check(StartFile()));
    }
    Status s = inner_->WriteRow(row);
    if (s.code() == StatusCode::kInvalidArgument) return s;  // a bad value: the row is skipped
    EC_RETURN_IF_ERROR(Check(s));
    for (auto& [col, total] : totals_) total.Add(row[col]);
    ++file_rows_;
    ++rows_;
    return Status::Ok();
  }

  StatusOr<WriteSummary> Finish() override {
    EC_RETURN_IF_ERROR(status_);
    if (state_ != State::kWriting) return Check(Internal("xlsx split: Finish without Begin"));
    state_ = State::kDone;
    EC_RETURN_IF_ERROR(Check(EndFile()));
    EC_RETURN_IF_ERROR(Check(WriteManifest()));
    EC_RETURN_IF_ERROR(Check(zip_.Finish()));
    std::vector<int64_t> part_rows;
    for (const auto& f : files_) part_rows.push_back(f.rows);
    return WriteSummary{.rows = rows_, .truncated_cells = truncated_, .part_rows = part_rows};
  }

 private:
  enum class State { kNew, kWriting, kDone };

  Status Check(Status s) {
    if (!s.ok() && status_.ok()) status_ = s;
    return s;
  }

  Status StartFile() {
    char name[32];
    std::snprintf(name, sizeof name, "_%03zu.xlsx", files_.size() + 1);
    files_.push_back({options_.split_file_stem + name, 0});
    EC_RETURN_IF_ERROR(zip_.BeginEntry(files_.back().name, ZipMethod::kStored));
    inner_ = NewXlsxWriter(&entry_sink_, options_);
    file_rows_ = 0;
    return inner_->Begin(columns_);
  }

  Status EndFile() {
    EC_ASSIGN_OR_RETURN(WriteSummary summary, inner_->Finish());
    truncated_ += summary.truncated_cells;
    files_.back().rows = file_rows_;
    return zip_.EndEntry();
  }

  Status WriteManifest() {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : files_) files.push_back({{"name", f.name}, {"rows", f.rows}});
    nlohmann::json manifest{
        {"files", files}, {"rows", rows_}, {"rowsPerFile", options_.rows_per_file}};
    // Each file's totals row covers its own rows; the grand totals are here.
    if (!totals_.empty()) {
      nlohmann::json totals = nlohmann::json::object();
      for (const auto& [col, total] : totals_) {
        const auto text = total.Text();
        totals[columns_[col].key] = text ? nlohmann::json(*text) : nlohmann::json(nullptr);
      }
      manifest["totals"] = std::move(totals);
    }
    const std::string text = DumpTolerant(manifest, 2);
    EC_RETURN_IF_ERROR(zip_.BeginEntry("manifest.json"));
    EC_RETURN_IF_ERROR(zip_.Write(text));
    return zip_.EndEntry();
  }

  struct File {
    std::string name;
    int64_t rows = 0;
  };

  Status status_;  // before aes_keys_, which may set it
  WriterOptions options_;
  std::vector<encryption::ZipEntryKey> aes_keys_;
  ZipStreamWriter zip_;
  EntrySink entry_sink_;
  std::unique_ptr<Writer> inner_;
  State state_ = State::kNew;
  std::vector<task::Column> columns_;
  std::vector<std::pair<size_t, internal::ColumnTotal>> totals_;  // grand totals, for the manifest
  std::vector<File> files_;
  int64_t file_rows_ = 0;
  int64_t rows_ = 0;
  int truncated_ = 0;
};

}  // namespace

std::unique_ptr<Writer> NewXlsxSplitWriter(ByteSink* sink, const WriterOptions& options) {
  return std::make_unique<XlsxSplitWriter>(sink, options);
}

}  // namespace export_center::render
