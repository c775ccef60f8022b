#pragma once
// ColumnPolicy: what a task may show of its governed columns
// (docs/configuration.md#column-governance-columns).
//
// A definition may govern a column by key: a permission the requester needs
// to see it, and what the file shows without it — nothing (the column is
// omitted), a masked text (the first n and last m characters kept), or a hex
// SHA-256 of the value. The decision is made once, when the task is created
// (DecideColumnPolicy), and stored on the task, so every attempt — a retry on
// another instance, after the requester's permissions or the definition
// changed — writes the same columns. Apply it to a source's columns and rows
// through ColumnPolicyApplier; both routes and the preview read through it
// (source::WithColumnPolicy), so no writer knows about governance.
//
// Pure and thread-safe: no I/O, no shared state.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "task/table.h"

namespace export_center::task {

enum class ColumnAction { kOmit, kMask, kHash };
std::string_view ToString(ColumnAction action);  // "omit" | "mask" | "hash"
std::optional<ColumnAction> ParseColumnAction(std::string_view text);

// One column the requester may not see in full.
struct ColumnDecision {
  std::string key;
  ColumnAction action = ColumnAction::kOmit;
  int keep_first = 0;   // kMask: code points kept at the start
  int keep_last = 0;    // kMask: code points kept at the end
  int hash_chars = 64;  // kHash: leading hex characters of the SHA-256 kept, 8..64
};

// The decisions of one task, one per governed column the requester lacks the
// permission of; empty when the file shows every column as the source sends it.
struct ColumnPolicy {
  std::vector<ColumnDecision> decisions;

  bool empty() const { return decisions.empty(); }
  int CountOf(ColumnAction action) const;
  // kMask and kHash: the column is there, its values are not.
  int masked() const { return CountOf(ColumnAction::kMask) + CountOf(ColumnAction::kHash); }
  int omitted() const { return CountOf(ColumnAction::kOmit); }
};

// The governance of one column in a definition.
struct ColumnRule {
  std::string key;
  std::string required_permission;
  ColumnDecision without;  // what applies to a requester without the permission
  // `require-file-password`: a requester who sees this column in full (holds
  // the permission) must protect the file with a password
  // (docs/configuration.md#password-protected-files-file-password).
  bool require_file_password{};
};

// The decisions for a requester holding `has_permission` permissions: one for
// each rule whose permission the requester lacks, in rule order.
template <typename HasPermission>
ColumnPolicy DecideColumnPolicy(const std::vector<ColumnRule>& rules,
                                const HasPermission& has_permission) {
  ColumnPolicy policy;
  for (const ColumnRule& rule : rules) {
    if (!has_permission(rule.required_permission)) policy.decisions.push_back(rule.without);
  }
  return policy;
}

// The governed columns a file written under `file` shows wider than a file
// written under `reader` would: for each decision of `reader`, its key when
// the file has no decision for it (the column in full), keeps it where
// `reader` omits it, masks it keeping more characters at either end, hashes
// it with more characters, or does the other of mask and hash (neither is
// narrower than the other). Empty when the file is no wider than the
// reader's own file: every column it reveals, in full or in part, the reader
// may see at least that much of. A decision of the file's for a column the
// reader sees in full never matters. In the reader's rule order.
std::vector<std::string> ColumnsWiderThan(const ColumnPolicy& file, const ColumnPolicy& reader);

// The stored form: a JSON array, `[{"key":"phone","action":"mask","keepFirst":3,
// "keepLast":4}, {"key":"id_card","action":"hash","hashChars":16}, ...]`; "" for
// an empty policy (what tasks created before governance have).
std::string ColumnPolicyToJson(const ColumnPolicy& policy);
// Internal when the text is not what ColumnPolicyToJson writes (it is ours).
StatusOr<ColumnPolicy> ColumnPolicyFromJson(std::string_view text);

// Keeps the first `keep_first` and last `keep_last` code points of `text` and
// writes one `*` for each other one: 13812345678 (3, 4) → 138****5678, 张三丰
// (1, 0) → 张**. At least one code point is always masked: when the text is
// not longer than keep_first + keep_last, fewer are kept (keep_last gives way
// first), so 张三 (1, 1) → 张*. Invalid UTF-8 is repaired first (U+FFFD).
std::string MaskText(std::string_view text, int keep_first, int keep_last);

// Lower-case hex SHA-256 of the UTF-8 `text`, cut to `hash_chars` characters.
std::string HashText(std::string_view text, int hash_chars);

// The text a governed cell is masked or hashed from: strings as they are,
// integers and decimals in plain digits, booleans true/false, dates
// YYYY-MM-DD, date-times ISO 8601 in UTC (…Z). nullopt for an empty cell,
// which stays empty.
std::optional<std::string> GovernedText(const CellValue& value);

// A policy bound to one column list: Columns() is what the file has, Apply
// turns one source row into one row of the file. Made once per attempt,
// after the first page told the columns. A decision naming a column the
// source does not send does nothing.
class ColumnPolicyApplier {
 public:
  ColumnPolicyApplier(const ColumnPolicy& policy, const std::vector<Column>& source_columns);

  // Omitted columns left out; masked and hashed columns typed STRING.
  const std::vector<Column>& Columns() const { return columns_; }
  Row Apply(Row row) const;

 private:
  struct Slot {
    size_t source_index;
    int decision;  // index into decisions_; -1: passed through
  };
  std::vector<ColumnDecision> decisions_;
  std::vector<Column> columns_;
  std::vector<Slot> slots_;  // one per column of the file
};

}  // namespace export_center::task
