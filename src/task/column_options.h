#pragma once
// The rich column options (issue 45): their validation and the value-label
// transform that runs before a writer. The options themselves live on
// task::Column (table.h); what each does to a file: docs/xlsx.md#rich-columns.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "task/table.h"

namespace export_center::task {

// Bounds of the options (docs/xlsx.md#rich-columns).
inline constexpr int kMaxTitleDepth = 5;
inline constexpr size_t kMaxTitleLevelBytes = 255;
inline constexpr size_t kMaxLabelsPerColumn = 1000;
inline constexpr size_t kMaxLabelKeyBytes = 256;
inline constexpr size_t kMaxLabelBytes = 1024;
inline constexpr size_t kMaxLabelMapBytes = 64 * 1024;  // keys + labels of one column
inline constexpr size_t kMaxHighlightValues = 50;
inline constexpr size_t kMaxHighlightValueBytes = 256;

// Refuses every bad rich option with InvalidArgument naming the column's key:
// a title path deeper than 5 levels or with an empty or oversized group
// level; mergeWithin without merge, naming no column, the column itself or a
// later column; a label map over 1000 entries / 64 KiB, with a duplicate,
// empty-key or oversized entry, or on a DATE/DATETIME column; a total on a
// column that is not INTEGER or DECIMAL, or on a labelled or merged column;
// a colour that is not #RRGGBB; a highlight without values or colours, with
// too many values, or comparing a non-numeric value (greater/less) or a
// non-numeric column. Called by ValidateColumns; idempotent, no state.
Status ValidateColumnOptions(const std::vector<Column>& columns);

// Labels a definition gives a column its source sends raw (the platform's
// own dictionaries; docs/configuration.md#rich-columns), already in the
// task's language.
struct LabelOverride {
  std::string key{};
  std::vector<std::pair<std::string, std::string>> labels{};  // value → label
  std::optional<LabelMissing> label_missing{};                // unset: the source's
};

// Merges `overrides` over `columns` by key: each override's labels are added
// to the column's, the override's label winning for a value both label, and
// its labelMissing replaces the column's when set; then the columns are
// validated again (ValidateColumns). InvalidArgument naming the column when
// an override names no column or the merged options are refused.
Status ApplyLabelOverrides(const std::vector<LabelOverride>& overrides,
                           std::vector<Column>* columns);

// True when any column asks for labels.
bool HasLabels(const std::vector<Column>& columns);

// Applies each column's `labels` to rows, in place, before the writer and
// before column governance masks (so a masked label stays masked). A null
// cell stays null. A value without a label is kept, blanked or, with
// labelMissing FAIL, refused: InvalidArgument naming the row, the column's
// key and the value. The value is quoted verbatim (cut to 64 bytes) and
// recorded as the Status's quoted value (Status::WithQuotedValue), so column
// governance (source/column_policy_source.h) withholds it for a governed
// column. Not thread-safe (one scratch buffer); cheap to construct.
class ValueLabeler {
 public:
  explicit ValueLabeler(const std::vector<Column>& columns);
  bool empty() const { return columns_.empty(); }
  // `row_number` is the 1-based data row, for the message only.
  Status Apply(int64_t row_number, Row* row);

 private:
  struct Labelled {
    size_t index;
    std::string key;
    LabelMissing missing;
    std::unordered_map<std::string, std::string> labels;
  };
  std::vector<Labelled> columns_;
  std::string scratch_;
};

}  // namespace export_center::task
