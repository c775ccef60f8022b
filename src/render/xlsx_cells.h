#pragma once
// Cell XML shared by XlsxWriter and the template writer. Internal to render/.

#include <string>
#include <string_view>

#include "common/status.h"
#include "render/cell_text.h"
#include "task/table.h"

namespace export_center::render::internal {

// Element text: & < > escaped, CR as &#13; (parsers fold a literal CR into LF).
void AppendXmlText(std::string_view text, std::string* out);

// -?digits(.digits)? : what ParseDecimal produces; anything else would corrupt
// the XML or be read as something other than the number.
bool IsDecimalText(std::string_view s);

// Writes one complete `<c r="ref"{style}...>` element for `value` with the
// rules of docs/xlsx.md (cleaning, formula guard, 32 767-unit truncation,
// serial dates, exact decimals, dates Excel cannot hold as ISO text).
// `style_attr` is ` s="N"` or empty. Null and "" write nothing. Counts cut
// cells in *truncated. InvalidArgument for a malformed decimal or date.
Status AppendTypedCell(std::string_view ref, std::string_view style_attr,
                       const task::CellValue& value, const task::Column& column, LocalClock* clock,
                       std::string* scratch, int* truncated, std::string* out);

// `value` as the text a CSV field would hold (for placeholders embedded in
// longer text): digits, TRUE/FALSE, yyyy-MM-dd, yyyy-MM-dd HH:mm:ss; "" for null.
std::string ValueAsText(const task::CellValue& value, LocalClock* clock);

// Appends an inline-string cell body (` t="inlineStr"><is><t>…</t></is></c>`)
// after an opened `<c ...`: cleaned, guarded, truncated as above.
void AppendInlineStringBody(std::string_view text, std::string* scratch, int* truncated,
                            std::string* out);

}  // namespace export_center::render::internal
