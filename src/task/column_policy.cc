#include "task/column_policy.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/digest.h"
#include "common/time_format.h"
#include "common/utf8.h"

namespace export_center::task {
namespace {

using json = nlohmann::json;

struct GovernedTextOf {
  std::optional<std::string> operator()(std::monostate) const { return std::nullopt; }
  std::optional<std::string> operator()(const std::string& s) const { return s; }
  std::optional<std::string> operator()(int64_t v) const { return std::to_string(v); }
  std::optional<std::string> operator()(const Decimal& d) const { return d.digits; }
  std::optional<std::string> operator()(bool b) const { return b ? "true" : "false"; }
  std::optional<std::string> operator()(const Date& d) const { return d.ToString(); }
  std::optional<std::string> operator()(const DateTime& t) const {
    return FormatIsoMillis(t.epoch_ms);
  }
};

CellValue Governed(const CellValue& value, const ColumnDecision& decision) {
  std::optional<std::string> text = GovernedText(value);
  if (!text) return std::monostate{};
  if (decision.action == ColumnAction::kHash) return HashText(*text, decision.hash_chars);
  return MaskText(*text, decision.keep_first, decision.keep_last);
}

json DecisionToJson(const ColumnDecision& d) {
  json out = {{"key", d.key}, {"action", std::string(ToString(d.action))}};
  if (d.action == ColumnAction::kMask) {
    out["keepFirst"] = d.keep_first;
    out["keepLast"] = d.keep_last;
  }
  if (d.action == ColumnAction::kHash) out["hashChars"] = d.hash_chars;
  return out;
}

int IntField(const json& item, const char* name, int fallback) {
  auto it = item.find(name);
  return it != item.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

}  // namespace

std::string_view ToString(ColumnAction action) {
  switch (action) {
    case ColumnAction::kOmit:
      return "omit";
    case ColumnAction::kMask:
      return "mask";
    case ColumnAction::kHash:
      return "hash";
  }
  return "omit";
}

std::optional<ColumnAction> ParseColumnAction(std::string_view text) {
  if (text == "omit") return ColumnAction::kOmit;
  if (text == "mask") return ColumnAction::kMask;
  if (text == "hash") return ColumnAction::kHash;
  return std::nullopt;
}

int ColumnPolicy::CountOf(ColumnAction action) const {
  return static_cast<int>(std::count_if(decisions.begin(), decisions.end(),
                                        [action](const auto& d) { return d.action == action; }));
}

std::vector<std::string> ColumnsWiderThan(const ColumnPolicy& file, const ColumnPolicy& reader) {
  std::vector<std::string> wider;
  for (const ColumnDecision& r : reader.decisions) {
    auto f = std::find_if(file.decisions.begin(), file.decisions.end(),
                          [&](const ColumnDecision& d) { return d.key == r.key; });
    if (f == file.decisions.end()) {
      wider.push_back(r.key);  // the file has the column in full
      continue;
    }
    bool narrow = false;
    if (f->action == ColumnAction::kOmit) {
      narrow = true;
    } else if (f->action == ColumnAction::kMask && r.action == ColumnAction::kMask) {
      narrow = f->keep_first <= r.keep_first && f->keep_last <= r.keep_last;
    } else if (f->action == ColumnAction::kHash && r.action == ColumnAction::kHash) {
      narrow = f->hash_chars <= r.hash_chars;
    }
    if (!narrow) wider.push_back(r.key);
  }
  return wider;
}

std::string ColumnPolicyToJson(const ColumnPolicy& policy) {
  if (policy.empty()) return "";
  json out = json::array();
  for (const ColumnDecision& d : policy.decisions) out.push_back(DecisionToJson(d));
  return out.dump();
}

StatusOr<ColumnPolicy> ColumnPolicyFromJson(std::string_view text) {
  ColumnPolicy policy;
  if (text.empty()) return policy;
  json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_array()) return Internal("column policy is not a JSON array");
  for (const json& item : parsed) {
    if (!item.is_object() || !item.contains("key") || !item["key"].is_string() ||
        !item.contains("action") || !item["action"].is_string()) {
      return Internal("column policy entry without key or action");
    }
    auto action = ParseColumnAction(item["action"].get<std::string>());
    if (!action) return Internal("column policy has an unknown action");
    ColumnDecision d;
    d.key = item["key"].get<std::string>();
    d.action = *action;
    d.keep_first = std::max(0, IntField(item, "keepFirst", 0));
    d.keep_last = std::max(0, IntField(item, "keepLast", 0));
    d.hash_chars = std::clamp(IntField(item, "hashChars", 64), 1, 64);
    policy.decisions.push_back(std::move(d));
  }
  return policy;
}

std::string MaskText(std::string_view text, int keep_first, int keep_last) {
  const std::string valid = utf8::MakeValid(text);
  std::vector<std::string_view> points;
  for (size_t i = 0; i < valid.size();) {
    const size_t n = utf8::SequenceLength(valid, i);
    points.push_back(std::string_view(valid).substr(i, n));
    i += n;
  }
  const size_t count = points.size();
  if (count == 0) return "";
  // At least one code point is masked, whatever the rule keeps.
  size_t first = std::min(static_cast<size_t>(std::max(keep_first, 0)), count - 1);
  size_t last = std::min(static_cast<size_t>(std::max(keep_last, 0)), count - 1 - first);
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    if (i < first || i >= count - last) {
      out.append(points[i]);
    } else {
      out.push_back('*');
    }
  }
  return out;
}

std::string HashText(std::string_view text, int hash_chars) {
  std::string hex = Sha256Hex(text);
  hex.resize(static_cast<size_t>(std::clamp(hash_chars, 1, 64)));
  return hex;
}

std::optional<std::string> GovernedText(const CellValue& value) {
  return std::visit(GovernedTextOf{}, value);
}

ColumnPolicyApplier::ColumnPolicyApplier(const ColumnPolicy& policy,
                                         const std::vector<Column>& source_columns)
    : decisions_(policy.decisions) {
  for (size_t i = 0; i < source_columns.size(); ++i) {
    const Column& column = source_columns[i];
    auto found = std::find_if(decisions_.begin(), decisions_.end(),
                              [&](const ColumnDecision& d) { return d.key == column.key; });
    if (found == decisions_.end()) {
      columns_.push_back(column);
      slots_.push_back({i, -1});
      continue;
    }
    if (found->action == ColumnAction::kOmit) continue;
    // A masked cell is text: its column is a plain string column.
    Column governed = column;
    governed.type = ColumnType::kString;
    governed.format.clear();
    // A total over the hidden values would show what the mask hides.
    governed.total = TotalKind::kNone;
    columns_.push_back(std::move(governed));
    slots_.push_back({i, static_cast<int>(found - decisions_.begin())});
  }
}

Row ColumnPolicyApplier::Apply(Row row) const {
  Row out;
  out.reserve(slots_.size());
  for (const Slot& slot : slots_) {
    if (slot.source_index >= row.size()) {
      out.emplace_back(std::monostate{});
    } else if (slot.decision < 0) {
      out.push_back(std::move(row[slot.source_index]));
    } else {
      out.push_back(Governed(row[slot.source_index], decisions_[slot.decision]));
    }
  }
  return out;
}

}  // namespace export_center::task
