// The package frame of xlsx_parts.h: the parts of an .xlsx other than its
// sheets and styles.xml, and the names and escaping they share.
#include "render/xlsx_parts.h"

#include <ctime>

#include "common/ascii.h"
#include "common/utf8.h"
#include "render/cell_text.h"

namespace export_center::render::internal {
namespace {

constexpr size_t kMaxSheetNameUnits = 31;

std::string UtcNowW3c() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string ColumnLetters(size_t index) {
  std::string s;
  for (size_t n = index + 1; n > 0; n = (n - 1) / 26) {
    s.insert(s.begin(), static_cast<char>('A' + (n - 1) % 26));
  }
  return s;
}

std::string XmlAttr(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string SanitizeSheetName(const std::string& name) {
  std::string scratch;
  std::string s(CleanText(name, &scratch));
  for (char& c : s) {
    if (std::string_view("[]:*?/\\\t\r\n").find(c) != std::string_view::npos) c = '_';
  }
  while (!s.empty() && s.front() == '\'') s.erase(s.begin());
  while (!s.empty() && s.back() == '\'') s.pop_back();
  if (EqualsIgnoreCaseAscii(s, "history")) s += "_";
  if (s.empty()) s = "Sheet1";
  return std::string(utf8::TruncateUtf16Units(s, kMaxSheetNameUnits));
}

std::string SheetName(const std::string& base, size_t number) {
  if (number == 1) return base;
  const std::string suffix = " (" + std::to_string(number) + ")";
  std::string head(utf8::TruncateUtf16Units(base, kMaxSheetNameUnits - suffix.size()));
  while (!head.empty() && head.back() == '\'') head.pop_back();
  return head + suffix;
}

std::string CorePropertiesXml() {
  const std::string now = UtcNowW3c();
  return std::string(kXmlDecl) +
         "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/"
         "metadata/core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" "
         "xmlns:dcterms=\"http://purl.org/dc/terms/\" "
         "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><dc:creator>export-center"
         "</dc:creator><dcterms:created xsi:type=\"dcterms:W3CDTF\">" +
         now + "</dcterms:created><dcterms:modified xsi:type=\"dcterms:W3CDTF\">" + now +
         "</dcterms:modified></cp:coreProperties>";
}

std::string AppPropertiesXml() {
  return std::string(kXmlDecl) +
         "<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/"
         "extended-properties\"><Application>export-center</Application></Properties>";
}

std::string PackageRelsXml() {
  return std::string(kXmlDecl) +
         "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
         "<Relationship Id=\"rId1\" Type=\"" +
         std::string(kRelNs) +
         "/officeDocument\" Target=\"xl/workbook.xml\"/><Relationship Id=\"rId2\" "
         "Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
         "core-properties\" Target=\"docProps/core.xml\"/><Relationship Id=\"rId3\" Type=\"" +
         std::string(kRelNs) +
         "/extended-properties\" Target=\"docProps/app.xml\"/>"
         "</Relationships>";
}

std::string WorkbookXml(const std::string& base_sheet_name, size_t sheets) {
  std::string x(kXmlDecl);
  x += "<workbook xmlns=\"" + std::string(kMainNs) + "\" xmlns:r=\"" + std::string(kRelNs) +
       "\"><workbookPr/><bookViews><workbookView/></bookViews><sheets>";
  for (size_t i = 1; i <= sheets; ++i) {
    x += "<sheet name=\"" + XmlAttr(SheetName(base_sheet_name, i)) + "\" sheetId=\"" +
         std::to_string(i) + "\" r:id=\"rId" + std::to_string(i) + "\"/>";
  }
  x += "</sheets></workbook>";
  return x;
}

std::string WorkbookRelsXml(size_t sheets) {
  std::string x(kXmlDecl);
  x += "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">";
  for (size_t i = 1; i <= sheets; ++i) {
    x += "<Relationship Id=\"rId" + std::to_string(i) + "\" Type=\"" + std::string(kRelNs) +
         "/worksheet\" Target=\"worksheets/sheet" + std::to_string(i) + ".xml\"/>";
  }
  x += "<Relationship Id=\"rId" + std::to_string(sheets + 1) + "\" Type=\"" + std::string(kRelNs) +
       "/styles\" Target=\"styles.xml\"/></Relationships>";
  return x;
}

std::string ContentTypesXml(size_t sheets) {
  constexpr std::string_view kSheetType =
      "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml";
  std::string x(kXmlDecl);
  x += "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
       "<Default Extension=\"rels\" "
       "ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
       "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
       "<Override PartName=\"/xl/workbook.xml\" ContentType=\"application/"
       "vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>"
       "<Override PartName=\"/xl/styles.xml\" ContentType=\"application/"
       "vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>"
       "<Override PartName=\"/docProps/core.xml\" ContentType=\"application/"
       "vnd.openxmlformats-package.core-properties+xml\"/>"
       "<Override PartName=\"/docProps/app.xml\" ContentType=\"application/"
       "vnd.openxmlformats-officedocument.extended-properties+xml\"/>";
  for (size_t i = 1; i <= sheets; ++i) {
    x += "<Override PartName=\"/xl/worksheets/sheet" + std::to_string(i) + ".xml\" ContentType=\"" +
         std::string(kSheetType) + "\"/>";
  }
  x += "</Types>";
  return x;
}

}  // namespace export_center::render::internal
