#pragma once
// The frame of an .xlsx package around the sheets XlsxWriter streams: the
// OOXML namespaces, attribute escaping, column letters, sheet names, and the
// parts that are fixed (docProps, _rels/.rels) or name only the sheets
// (workbook.xml, its rels, [Content_Types].xml). Internal to render/.

#include <cstddef>
#include <string>
#include <string_view>

namespace export_center::render::internal {

inline constexpr std::string_view kXmlDecl =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";
inline constexpr std::string_view kMainNs =
    "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
inline constexpr std::string_view kRelNs =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

// "A", "B", …, "Z", "AA", … for the 0-based column index.
std::string ColumnLetters(size_t index);

// Attribute values also escape quotes and keep tabs and newlines as references.
std::string XmlAttr(std::string_view text);

// Sheet names: at most 31 units, none of []:*?/\ , no leading/trailing
// apostrophe, not "History" (reserved by Excel), and never empty.
std::string SanitizeSheetName(const std::string& name);

// "Name", then "Name (2)", "Name (3)"… cut so the suffix always fits.
std::string SheetName(const std::string& base, size_t number);

// docProps/core.xml (created and modified now), docProps/app.xml, _rels/.rels.
std::string CorePropertiesXml();
std::string AppPropertiesXml();
std::string PackageRelsXml();

// The parts naming sheets 1..sheets, written once the last sheet is closed.
std::string WorkbookXml(const std::string& base_sheet_name, size_t sheets);
std::string WorkbookRelsXml(size_t sheets);
std::string ContentTypesXml(size_t sheets);

}  // namespace export_center::render::internal
