#include "render/writer.h"

#include "render/cell_text.h"

namespace export_center::render {

std::string GuardFormula(std::string text) {
  if (internal::NeedsFormulaGuard(text)) text.insert(text.begin(), '\'');
  return text;
}

}  // namespace export_center::render
