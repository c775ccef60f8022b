#include "task/column_options.h"

#include <array>
#include <charconv>
#include <set>
#include <string_view>
#include <utility>

#include "common/utf8.h"

namespace export_center::task {
namespace {

constexpr size_t kMaxQuotedBytes = 64;

constexpr std::array<std::pair<MergeMode, std::string_view>, 2> kMergeNames = {{
    {MergeMode::kNone, "NONE"},
    {MergeMode::kSameValue, "SAME_VALUE"},
}};
constexpr std::array<std::pair<LabelMissing, std::string_view>, 3> kMissingNames = {{
    {LabelMissing::kKeep, "KEEP"},
    {LabelMissing::kBlank, "BLANK"},
    {LabelMissing::kFail, "FAIL"},
}};
constexpr std::array<std::pair<TotalKind, std::string_view>, 6> kTotalNames = {{
    {TotalKind::kNone, "NONE"},
    {TotalKind::kSum, "SUM"},
    {TotalKind::kCount, "COUNT"},
    {TotalKind::kMin, "MIN"},
    {TotalKind::kMax, "MAX"},
    {TotalKind::kAvg, "AVG"},
}};

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "UNKNOWN";
}

template <typename E, size_t N>
std::optional<E> ValueOf(const std::array<std::pair<E, std::string_view>, N>& names,
                         std::string_view text) {
  for (const auto& [e, name] : names) {
    if (name == text) return e;
  }
  return std::nullopt;
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}

bool IsColour(std::string_view text) {
  if (text.size() != 7 || text[0] != '#') return false;
  for (size_t i = 1; i < 7; ++i) {
    if (!IsHex(text[i])) return false;
  }
  return true;
}

// -?digits(.digits)?: what a numeric threshold may be.
bool IsNumberText(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && text[i] == '-') ++i;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) ++digits;
  if (digits == 0) return false;
  if (i == text.size()) return true;
  if (text[i] != '.') return false;
  ++i;
  size_t frac = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) ++frac;
  return frac > 0 && i == text.size() && text.size() <= 40;
}

bool IsNumeric(ColumnType type) {
  return type == ColumnType::kInteger || type == ColumnType::kDecimal;
}

Status CheckColour(const std::string& where, std::string_view what, const std::string& colour) {
  if (colour.empty() || IsColour(colour)) return Status::Ok();
  return InvalidArgument(where + ": " + std::string(what) + " '" +
                         utf8::Excerpt(colour, kMaxQuotedBytes) + "' is not #RRGGBB");
}

Status CheckTitle(const std::string& where, const Column& c) {
  if (TitleDepth(c) > kMaxTitleDepth) {
    return InvalidArgument(where + ": title has " + std::to_string(TitleDepth(c)) +
                           " levels, at most 5");
  }
  for (const std::string& level : c.title_groups) {
    if (level.empty()) return InvalidArgument(where + ": title has an empty level");
    if (level.size() > kMaxTitleLevelBytes) {
      return InvalidArgument(where + ": a title level is over 255 bytes");
    }
  }
  return Status::Ok();
}

Status CheckLabels(const std::string& where, const Column& c) {
  if (c.labels.empty()) return Status::Ok();
  if (c.type == ColumnType::kDate || c.type == ColumnType::kDateTime) {
    return InvalidArgument(where + ": labels on a " + std::string(ToString(c.type)) + " column");
  }
  if (c.labels.size() > kMaxLabelsPerColumn) {
    return InvalidArgument(where + ": " + std::to_string(c.labels.size()) +
                           " labels exceed the limit of 1000");
  }
  std::set<std::string_view> keys;
  size_t bytes = 0;
  for (const auto& [value, label] : c.labels) {
    if (value.empty()) return InvalidArgument(where + ": a label has an empty value");
    if (value.size() > kMaxLabelKeyBytes) {
      return InvalidArgument(where + ": a labelled value is over 256 bytes");
    }
    if (label.size() > kMaxLabelBytes) {
      return InvalidArgument(where + ": the label of '" + utf8::Excerpt(value, kMaxQuotedBytes) +
                             "' is over 1024 bytes");
    }
    if (!keys.insert(value).second) {
      return InvalidArgument(where + ": value '" + utf8::Excerpt(value, kMaxQuotedBytes) +
                             "' is labelled twice");
    }
    bytes += value.size() + label.size();
  }
  if (bytes > kMaxLabelMapBytes) {
    return InvalidArgument(where + ": labels total " + std::to_string(bytes) +
                           " bytes, over the limit of 65536");
  }
  return Status::Ok();
}

Status CheckTotal(const std::string& where, const Column& c) {
  if (c.total == TotalKind::kNone) return Status::Ok();
  const std::string total(ToString(c.total));
  if (!IsNumeric(c.type)) {
    return InvalidArgument(where + ": total " + total + " on a " + std::string(ToString(c.type)) +
                           " column (INTEGER or DECIMAL only)");
  }
  if (!c.labels.empty())
    return InvalidArgument(where + ": total " + total + " on a labelled column");
  if (c.merge != MergeMode::kNone) {
    return InvalidArgument(where + ": total " + total +
                           " on a merged column (its merged cells hide values)");
  }
  return Status::Ok();
}

Status CheckHighlight(const std::string& where, const Column& c) {
  const Highlight& h = c.highlight;
  EC_RETURN_IF_ERROR(CheckColour(where, "highlight fill", h.fill));
  EC_RETURN_IF_ERROR(CheckColour(where, "highlight font colour", h.font));
  if (h.op == HighlightOp::kNone) return Status::Ok();
  if (h.fill.empty() && h.font.empty()) {
    return InvalidArgument(where + ": highlight has neither a fill nor a font colour");
  }
  if (h.values.empty()) return InvalidArgument(where + ": highlight has no value");
  if (h.op != HighlightOp::kIn && h.values.size() != 1) {
    return InvalidArgument(where + ": highlight compares with exactly one value");
  }
  if (h.values.size() > kMaxHighlightValues) {
    return InvalidArgument(where + ": highlight has over 50 values");
  }
  const bool numeric = IsNumeric(c.type) && c.labels.empty();
  if ((h.op == HighlightOp::kGreater || h.op == HighlightOp::kLess) && !numeric) {
    return InvalidArgument(where + ": greater/less highlight on a column that is not numeric");
  }
  if (c.type != ColumnType::kString && !numeric && c.labels.empty()) {
    return InvalidArgument(where + ": highlight on a " + std::string(ToString(c.type)) + " column");
  }
  for (const std::string& v : h.values) {
    if (v.size() > kMaxHighlightValueBytes) {
      return InvalidArgument(where + ": a highlight value is over 256 bytes");
    }
    if (numeric && !IsNumberText(v)) {
      return InvalidArgument(where + ": highlight value '" + utf8::Excerpt(v, kMaxQuotedBytes) +
                             "' is not a number");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view ToString(MergeMode mode) { return NameOf(kMergeNames, mode); }
std::string_view ToString(LabelMissing missing) { return NameOf(kMissingNames, missing); }
std::string_view ToString(TotalKind total) { return NameOf(kTotalNames, total); }
std::optional<MergeMode> ParseMergeMode(std::string_view text) {
  return ValueOf(kMergeNames, text);
}
std::optional<LabelMissing> ParseLabelMissing(std::string_view text) {
  return ValueOf(kMissingNames, text);
}
std::optional<TotalKind> ParseTotalKind(std::string_view text) {
  return ValueOf(kTotalNames, text);
}

int TitleDepth(const Column& column) { return static_cast<int>(column.title_groups.size()) + 1; }

std::string_view TitleLevel(const Column& column, int level) {
  const size_t l = static_cast<size_t>(level);
  return l < column.title_groups.size() ? std::string_view(column.title_groups[l])
                                        : std::string_view(column.title);
}

Status ValidateColumnOptions(const std::vector<Column>& columns) {
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column& c = columns[i];
    const std::string where = "column '" + utf8::Excerpt(c.key, 128) + "'";
    EC_RETURN_IF_ERROR(CheckTitle(where, c));
    if (!c.merge_within.empty()) {
      if (c.merge == MergeMode::kNone) {
        return InvalidArgument(where + ": mergeWithin without merge SAME_VALUE");
      }
      size_t parent = columns.size();
      for (size_t j = 0; j < columns.size(); ++j) {
        if (columns[j].key == c.merge_within) parent = j;
      }
      const std::string named = "mergeWithin '" + utf8::Excerpt(c.merge_within, 128) + "'";
      if (parent == columns.size())
        return InvalidArgument(where + ": " + named + " is not a column");
      if (parent >= i) {
        return InvalidArgument(where + ": " + named + " must name an earlier column");
      }
    }
    EC_RETURN_IF_ERROR(CheckLabels(where, c));
    EC_RETURN_IF_ERROR(CheckTotal(where, c));
    EC_RETURN_IF_ERROR(CheckColour(where, "header fill", c.style.header_fill));
    EC_RETURN_IF_ERROR(CheckColour(where, "header font colour", c.style.header_font));
    EC_RETURN_IF_ERROR(CheckHighlight(where, c));
  }
  return Status::Ok();
}

Status ApplyLabelOverrides(const std::vector<LabelOverride>& overrides,
                           std::vector<Column>* columns) {
  if (overrides.empty()) return Status::Ok();
  for (const LabelOverride& o : overrides) {
    Column* column = nullptr;
    for (Column& c : *columns) {
      if (c.key == o.key) column = &c;
    }
    if (column == nullptr) {
      return InvalidArgument("column '" + utf8::Excerpt(o.key, 128) +
                             "': the definition labels a column the source does not send");
    }
    for (const auto& [value, label] : o.labels) {
      bool replaced = false;
      for (auto& [have, shown] : column->labels) {
        if (have == value) {
          shown = label;
          replaced = true;
        }
      }
      if (!replaced) column->labels.emplace_back(value, label);
    }
    if (o.label_missing) column->label_missing = *o.label_missing;
  }
  return ValidateColumns(*columns);
}

bool HasLabels(const std::vector<Column>& columns) {
  for (const Column& c : columns) {
    if (!c.labels.empty()) return true;
  }
  return false;
}

ValueLabeler::ValueLabeler(const std::vector<Column>& columns) {
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column& c = columns[i];
    if (c.labels.empty()) continue;
    Labelled l{.index = i, .key = c.key, .missing = c.label_missing, .labels = {}};
    l.labels.reserve(c.labels.size());
    for (const auto& [value, label] : c.labels) l.labels.emplace(value, label);
    columns_.push_back(std::move(l));
  }
}

Status ValueLabeler::Apply(int64_t row_number, Row* row) {
  for (const Labelled& l : columns_) {
    if (l.index >= row->size()) continue;
    CellValue& cell = (*row)[l.index];
    const std::string* key = nullptr;
    switch (cell.index()) {
      case 1:
        key = std::get_if<std::string>(&cell);
        break;
      case 2: {
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof buf, *std::get_if<int64_t>(&cell));
        scratch_.assign(buf, r.ptr);
        key = &scratch_;
        break;
      }
      case 3:
        key = &std::get_if<Decimal>(&cell)->digits;
        break;
      case 4:
        scratch_ = *std::get_if<bool>(&cell) ? "true" : "false";
        key = &scratch_;
        break;
      default:
        continue;  // null (and dates, which cannot carry labels) stay as they are
    }
    auto it = l.labels.find(*key);
    if (it != l.labels.end()) {
      cell = it->second;
      continue;
    }
    switch (l.missing) {
      case LabelMissing::kKeep:
        break;
      case LabelMissing::kBlank:
        cell = std::monostate{};
        break;
      case LabelMissing::kFail: {
        // The quote is recorded (Status::WithQuotedValue), so column
        // governance withholds it when the column is governed (issue 43).
        const std::string before =
            "row " + std::to_string(row_number) + ", column '" + l.key + "': value '";
        const std::string quoted = utf8::Excerpt(*key, kMaxQuotedBytes);
        return InvalidArgument(before + quoted + "' has no label")
            .WithQuotedValue(l.key, before.size(), quoted.size());
      }
    }
  }
  return Status::Ok();
}

}  // namespace export_center::task
