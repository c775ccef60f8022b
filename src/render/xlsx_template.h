#pragma once
// The pieces of template fill: reading the template package (libzip), the
// placeholder syntax, cell references and the parsed sheets (pugixml).
// Internal to render/; xlsx_template_writer.h is the public face.

#include <cstdint>
#include <memory>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::render::internal {

// One part of the template package, exactly as stored.
struct PackagePart {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate (others are rejected)
  uint32_t crc = 0;
  uint64_t size = 0;       // uncompressed
  std::string compressed;  // the stored bytes, for a byte-for-byte copy
};

// Reads the central directory and each part's raw bytes with libzip.
// InvalidArgument for anything that is not a plain ZIP of stored/deflated parts.
StatusOr<std::vector<PackagePart>> ReadPackage(std::string_view bytes);
// The uncompressed bytes of a part, CRC-checked; parts over 64 MiB are refused.
StatusOr<std::string> PartText(const PackagePart& part);

// `{name}` (single value) or `{.field}` (list marker) inside cell text.
struct Token {
  enum Kind { kText, kSingle, kField } kind = kText;
  std::string text;  // literal text, or the placeholder's name
};
// Splits text into literal runs and placeholders. Names are
// [A-Za-z_][A-Za-z0-9_]*; anything else in braces is literal text.
std::vector<Token> Tokenize(std::string_view text);
bool HasPlaceholder(const std::vector<Token>& tokens);

// "B12" / "$B$12" -> column 0-based, row 1-based. False when malformed.
bool ParseCellRef(std::string_view ref, int* col, int64_t* row);
std::string ColumnName(int col);  // 0 -> "A"

// How rows move when `count` list rows replace the template's list row `list_row`.
struct RowShift {
  int64_t list_row = 0;
  int64_t count = 1;
  int64_t delta() const { return count - 1; }
  int64_t Row(int64_t r) const { return r > list_row ? r + delta() : r; }
};
// Shifts a range "A1:C5" (or a single ref) by the rules of xlsx_template_writer.h:
// rows below the list move, a range ending on or spanning the list row grows,
// a range inside the list row spans every list row. Returns "" when the range
// vanishes (inside the list row and no rows were written). Refs it cannot
// parse are returned unchanged.
std::string ShiftRange(std::string_view range, const RowShift& shift);
// Space-separated list of ranges (sqref).
std::string ShiftSqref(std::string_view sqref, const RowShift& shift);
// Re-points same-sheet cell references inside a formula (outside string
// literals, not sheet-qualified, not function names).
std::string ShiftFormula(std::string_view formula, const RowShift& shift);

// A cell holding at least one placeholder.
struct PlaceholderCell {
  pugi::xml_node node;
  std::vector<Token> tokens;
  int64_t row = 0;
  int col = 0;
};

// A parsed worksheet and its placeholder cells.
struct TemplateSheet {
  std::string part;
  std::unique_ptr<pugi::xml_document> doc;
  std::vector<PlaceholderCell> cells;
  pugi::xml_node sheet_data;
  pugi::xml_node list_row;  // the row holding `{.field}` markers, if any
  int64_t list_row_number = 0;
};

// The strings of xl/sharedStrings.xml, rich text flattened.
StatusOr<std::vector<std::string>> ParseSharedStrings(const std::string& xml);
// Parses a worksheet and finds its placeholders. InvalidArgument when the XML
// is malformed, a row or cell has no usable r=, or two rows hold list markers.
Status LoadSheet(const std::string& part, const std::string& xml,
                 const std::vector<std::string>& shared_strings, TemplateSheet* sheet);

// The element's name without a namespace prefix.
std::string_view LocalName(const pugi::xml_node& node);
// Serializes a node (or document) without indentation.
std::string NodeXml(const pugi::xml_node& node);

}  // namespace export_center::render::internal
