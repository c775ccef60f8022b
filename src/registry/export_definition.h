#pragma once
// ExportDefinition: one registered export type
// (docs/configuration.md#export-type-registry-hot-reloaded).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "task/column_options.h"
#include "task/column_policy.h"
#include "task/language.h"
#include "task/task.h"

namespace export_center::registry {

enum class SourceKind { kProvider, kSqlTemplate };

// `file-password`: whether a requester may, or must, protect the file with a
// password (docs/configuration.md#password-protected-files-file-password).
enum class FilePasswordRule { kNone, kOptional, kRequired };

// A parameter the type accepts from the browser. Undeclared parameters → 400.
struct ParameterSpec {
  std::string name;
  std::string type = "STRING";  // STRING | INTEGER | BOOLEAN | DATE | STRING_LIST
  std::string title;
  bool required = false;
  std::vector<std::string> allowed;  // optional enumeration
};

// `columns.<key>.labels` / `label-missing`: labels for a column the source
// sends raw — the platform's own dictionaries (docs/configuration.md#rich-columns),
// merged over the source's column of that key, the definition's winning.
struct ColumnLabels {
  std::string key{};
  std::vector<std::pair<std::string, task::LocalizedText>> labels{};  // value → label
  std::optional<task::LabelMissing> label_missing{};
};

struct ExportDefinition {
  std::string name;   // the map key, e.g. CUSTOMER_LIST
  std::string title;  // default task name, e.g. 客户列表
  SourceKind source = SourceKind::kProvider;
  std::string service;   // must name an entry of provider-services
  std::string path;      // provider: /internal/exports/v1/{NAME}/batches
  std::string query_id;  // sql-template
  std::string datasource;
  std::string consistency = "strict";  // sql-template: strict | lenient
  std::string required_permission;
  task::AppCode app_scope = task::AppCode::kPlatform;
  bool enabled = true;
  int64_t max_rows = 200000;
  int32_t max_attempts = 3;
  int batch_size = 500;
  std::string file_name_pattern = "{taskName}_{date}";  // .ext is appended
  std::string timezone = "Asia/Shanghai";
  std::vector<ParameterSpec> parameters;
  // `columns`: columns governed by key, each with the permission a requester
  // needs to see it and what the file shows without it
  // (docs/configuration.md#column-governance-columns). Decided at create.
  std::vector<task::ColumnRule> column_rules;
  // `file-password`: none (default), optional or required. A column rule's
  // require-file-password needs optional or required.
  FilePasswordRule file_password = FilePasswordRule::kNone;

  // Files (docs/xlsx.md). XLSX: `template-file`, an .xlsx template
  // filled instead of the metadata-driven layout; its bytes are loaded and
  // checked when the config is parsed (a later edit of the file needs a reload).
  std::string template_file;
  std::shared_ptr<const std::string> template_bytes;
  // XLSX: `split: files` with `rows-per-file` N makes a .zip of .xlsx files of
  // at most N rows plus manifest.json; 0 = one workbook (sheets split by themselves).
  int64_t rows_per_file = 0;
  // CSV: `csv-gzip: true` makes .csv.gz (application/gzip).
  bool csv_gzip = false;

  // Languages (docs/configuration.md#rich-columns). `locale`: the default
  // language of the type's texts (a BCP 47 tag, task::IsLocaleTag), and of a
  // task created without one (docs/http-api.md#post-export-tasks--create;
  // "" = none, the language objects' own fallback). `sheet-name` and `totals-label`: one text or
  // one per language; empty = the writer's default ("Sheet1", "Total").
  std::string locale{};
  task::LocalizedText sheet_name{};
  task::LocalizedText totals_label{};
  std::vector<ColumnLabels> column_labels{};
};

// The languages `task`'s texts are shown in: its locale, and the
// definition's as the default.
task::Languages LanguagesFor(const ExportDefinition& def, const task::Task& task);

// The definition's column labels in `languages`, for source::WithLabels.
std::vector<task::LabelOverride> LabelOverridesFor(const ExportDefinition& def,
                                                   const task::Languages& languages);

// A business service the center may call: the anti-SSRF allow-list.
struct ProviderService {
  std::string name;
  std::string base_url;  // http://host:port
  std::string internal_token;
  // "" or "/a/b": base-url's path, prefixed to every request path. Last, so the
  // brace initialisers {name, base_url, internal_token} keep their meaning.
  std::string base_path;
};

}  // namespace export_center::registry
