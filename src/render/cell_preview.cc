#include "render/cell_preview.h"

#include <variant>

#include "common/utf8.h"

namespace export_center::render {

StatusOr<CellPreview> CellPreview::Create(const std::string& timezone, task::FileFormat format) {
  CellPreview preview;
  EC_RETURN_IF_ERROR(preview.clock_.Init(timezone));
  preview.cut_at_xlsx_limit_ = format == task::FileFormat::kXlsx;
  return preview;
}

// Clean, guard, cut: the order of xlsx_cells.cc and csv_writer.cc.
std::string CellPreview::GuardedText(std::string_view text) {
  const std::string_view clean = internal::CleanText(text, &scratch_);
  const bool guard = internal::NeedsFormulaGuard(clean);
  std::string out = guard ? "'" : "";
  out.append(cut_at_xlsx_limit_ ? utf8::TruncateUtf16Units(clean, internal::kMaxCellUnits - guard)
                                : clean);
  return out;
}

StatusOr<std::string> CellPreview::Text(const task::CellValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return GuardedText(*s);
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<task::Decimal>(&value)) return d->digits;
  if (const auto* b = std::get_if<bool>(&value)) return std::string(*b ? "TRUE" : "FALSE");
  std::string out;
  if (const auto* date = std::get_if<task::Date>(&value)) {
    date->AppendTo(&out);
    return out;
  }
  if (const auto* at = std::get_if<task::DateTime>(&value)) {
    int64_t days = 0, ms = 0;
    clock_.Split(at->epoch_ms, &days, &ms);
    internal::AppendIsoDateTime(days, ms, &out);
    return out;
  }
  return out;  // null
}

}  // namespace export_center::render
