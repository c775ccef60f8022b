#pragma once
// ExportDefinition: one registered export type
// (docs/configuration.md#export-type-registry-hot-reloaded).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "task/column_policy.h"
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
};

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
