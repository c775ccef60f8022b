#include "render/xlsx_template.h"

#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "common/nesting.h"

namespace export_center::render::internal {
namespace {

constexpr uint64_t kMaxPartBytes = 64ull << 20;  // a template part, uncompressed
constexpr size_t kMaxParts = 10000;
constexpr int64_t kMaxRow = 1048576;
constexpr int kMaxCol = 16384;

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct FileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

Status ReadRaw(zip_t* zip, zip_uint64_t index, uint64_t length, std::string* out) {
  std::unique_ptr<zip_file_t, FileCloser> file(zip_fopen_index(zip, index, ZIP_FL_COMPRESSED));
  if (!file) return InvalidArgument(std::string("cannot read part: ") + zip_strerror(zip));
  out->resize(length);
  uint64_t got = 0;
  while (got < length) {
    const zip_int64_t n = zip_fread(file.get(), out->data() + got, length - got);
    if (n <= 0) return InvalidArgument("truncated part");
    got += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

bool IsNameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The text a cell shows, when it is a string: shared, inline or rich.
bool CellText(const pugi::xml_node& c, const std::vector<std::string>& shared, std::string* out) {
  const std::string_view t = c.attribute("t").value();
  if (t == "s") {
    for (pugi::xml_node v : c.children()) {
      if (LocalName(v) != "v") continue;
      const long index = std::strtol(v.text().get(), nullptr, 10);
      if (index < 0 || static_cast<size_t>(index) >= shared.size()) return false;
      *out = shared[index];
      return true;
    }
    return false;
  }
  if (t != "inlineStr") return false;
  out->clear();
  for (pugi::xml_node is : c.children()) {
    if (LocalName(is) != "is") continue;
    // <is><t>..</t></is> or rich runs <is><r><t>..</t></r>...</is>.
    for (pugi::xml_node n = is.first_child(); n; n = n.next_sibling()) {
      if (LocalName(n) == "t") {
        *out += n.text().get();
      } else if (LocalName(n) == "r") {
        for (pugi::xml_node t2 : n.children()) {
          if (LocalName(t2) == "t") *out += t2.text().get();
        }
      }
    }
  }
  return true;
}

// Splits "A1:C5" into its two ends; a single ref is both.
bool ParseRange(std::string_view range, int* c1, int64_t* r1, int* c2, int64_t* r2) {
  const size_t colon = range.find(':');
  if (colon == std::string_view::npos) {
    if (!ParseCellRef(range, c1, r1)) return false;
    *c2 = *c1;
    *r2 = *r1;
    return true;
  }
  return ParseCellRef(range.substr(0, colon), c1, r1) &&
         ParseCellRef(range.substr(colon + 1), c2, r2);
}

// Keeps the $ markers of the original reference while changing its row.
std::string WithRow(std::string_view ref, int64_t row) {
  size_t i = 0;
  while (i < ref.size() && (ref[i] == '$' || IsUpper(ref[i]))) ++i;
  std::string out(ref.substr(0, i));
  if (i < ref.size() && ref[i] == '$') out += '$';
  return out + std::to_string(row);
}

}  // namespace

std::string_view LocalName(const pugi::xml_node& node) {
  std::string_view name = node.name();
  const size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

std::string NodeXml(const pugi::xml_node& node) {
  struct Writer : pugi::xml_writer {
    std::string out;
    void write(const void* data, size_t size) override {
      out.append(static_cast<const char*>(data), size);
    }
  } w;
  node.print(w, "", pugi::format_raw, pugi::encoding_utf8);
  return std::move(w.out);
}

StatusOr<std::vector<PackagePart>> ReadPackage(std::string_view bytes) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) return InvalidArgument("template: cannot read the ZIP");
  std::unique_ptr<zip_t, ZipCloser> zip(zip_open_from_source(source, ZIP_RDONLY, &error));
  if (!zip) {
    zip_source_free(source);
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    return InvalidArgument("template is not a readable .xlsx (ZIP): " + why);
  }
  const zip_int64_t count = zip_get_num_entries(zip.get(), 0);
  if (count <= 0 || static_cast<size_t>(count) > kMaxParts) {
    return InvalidArgument("template: expected 1.." + std::to_string(kMaxParts) + " ZIP entries");
  }
  std::vector<PackagePart> parts;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    if (zip_stat_index(zip.get(), i, 0, &st) != 0) return InvalidArgument("template: bad entry");
    PackagePart part;
    part.name = st.name;
    if (part.name.empty() || part.name.back() == '/') continue;  // directories
    if (st.encryption_method != ZIP_EM_NONE) {
      return InvalidArgument("template part " + part.name + " is encrypted");
    }
    if (st.comp_method != 0 && st.comp_method != 8) {
      return InvalidArgument("template part " + part.name + " uses ZIP method " +
                             std::to_string(st.comp_method) + "; only stored and deflate");
    }
    if (st.size > kMaxPartBytes || st.comp_size > kMaxPartBytes) {
      return InvalidArgument("template part " + part.name + " is over 64 MiB");
    }
    part.method = st.comp_method;
    part.crc = st.crc;
    part.size = st.size;
    Status s = ReadRaw(zip.get(), i, st.comp_size, &part.compressed);
    if (!s.ok()) return InvalidArgument("template part " + part.name + ": " + s.message());
    parts.push_back(std::move(part));
  }
  return parts;
}

StatusOr<std::string> PartText(const PackagePart& part) {
  std::string out;
  if (part.method == 0) {
    out = part.compressed;
  } else {
    out.resize(part.size);
    z_stream z{};
    if (inflateInit2(&z, -15) != Z_OK) return Internal("zlib inflateInit2 failed");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(part.compressed.data()));
    z.avail_in = static_cast<uInt>(part.compressed.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&z, Z_FINISH);
    const bool ok = rc == Z_STREAM_END && z.total_out == part.size;
    inflateEnd(&z);
    if (!ok) return InvalidArgument("template part " + part.name + " does not inflate");
  }
  if (crc32_z(0, reinterpret_cast<const Bytef*>(out.data()), out.size()) != part.crc) {
    return InvalidArgument("template part " + part.name + " fails its CRC check");
  }
  return out;
}

std::vector<Token> Tokenize(std::string_view text) {
  std::vector<Token> tokens;
  auto literal = [&](std::string_view s) {
    if (s.empty()) return;
    if (!tokens.empty() && tokens.back().kind == Token::kText) {
      tokens.back().text += s;
    } else {
      tokens.push_back({Token::kText, std::string(s)});
    }
  };
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    if (open == std::string_view::npos) break;
    const size_t close = text.find('}', open);
    if (close == std::string_view::npos) break;
    std::string_view inner = text.substr(open + 1, close - open - 1);
    const bool list = !inner.empty() && inner[0] == '.';
    if (list) inner.remove_prefix(1);
    const bool name_ok = !inner.empty() && IsNameStart(inner[0]) &&
                         std::all_of(inner.begin(), inner.end(), IsNameChar);
    if (!name_ok) {
      literal(text.substr(i, open + 1 - i));  // keep the brace, rescan after it
      i = open + 1;
      continue;
    }
    literal(text.substr(i, open - i));
    tokens.push_back({list ? Token::kField : Token::kSingle, std::string(inner)});
    i = close + 1;
  }
  literal(text.substr(i));
  return tokens;
}

bool HasPlaceholder(const std::vector<Token>& tokens) {
  return std::any_of(tokens.begin(), tokens.end(),
                     [](const Token& t) { return t.kind != Token::kText; });
}

bool ParseCellRef(std::string_view ref, int* col, int64_t* row) {
  size_t i = 0;
  if (i < ref.size() && ref[i] == '$') ++i;
  int c = 0;
  const size_t letters = i;
  while (i < ref.size() && IsUpper(ref[i]) && i - letters < 3) c = c * 26 + (ref[i++] - 'A' + 1);
  if (i == letters || c > kMaxCol) return false;
  if (i < ref.size() && ref[i] == '$') ++i;
  int64_t r = 0;
  const size_t digits = i;
  while (i < ref.size() && IsDigit(ref[i]) && i - digits < 7) r = r * 10 + (ref[i++] - '0');
  if (i == digits || i != ref.size() || r < 1 || r > kMaxRow) return false;
  *col = c - 1;
  *row = r;
  return true;
}

std::string ColumnName(int col) {
  std::string s;
  for (int n = col + 1; n > 0; n = (n - 1) / 26)
    s.insert(s.begin(), static_cast<char>('A' + (n - 1) % 26));
  return s;
}

std::string ShiftRange(std::string_view range, const RowShift& shift) {
  int c1, c2;
  int64_t r1, r2;
  if (!ParseRange(range, &c1, &r1, &c2, &r2)) return std::string(range);
  const int64_t l = shift.list_row;
  int64_t n1 = r1, n2 = r2;
  if (r1 == l && r2 == l) {  // inside the list row: all list rows
    if (shift.count == 0) return "";
    n2 = l + shift.count - 1;
  } else {
    n1 = shift.Row(r1);
    n2 = r2 >= l ? r2 + shift.delta() : r2;
  }
  const size_t colon = range.find(':');
  if (colon == std::string_view::npos) {
    if (n1 == n2) return WithRow(range, n1);
    return WithRow(range, n1) + ":" + WithRow(range, n2);
  }
  return WithRow(range.substr(0, colon), n1) + ":" + WithRow(range.substr(colon + 1), n2);
}

std::string ShiftSqref(std::string_view sqref, const RowShift& shift) {
  std::string out;
  size_t i = 0;
  while (i < sqref.size()) {
    size_t end = sqref.find(' ', i);
    if (end == std::string_view::npos) end = sqref.size();
    const std::string part = ShiftRange(sqref.substr(i, end - i), shift);
    if (!part.empty()) {
      if (!out.empty()) out += ' ';
      out += part;
    }
    i = end + 1;
  }
  return out;
}

std::string ShiftFormula(std::string_view f, const RowShift& shift) {
  std::string out;
  size_t i = 0;
  bool in_string = false;
  while (i < f.size()) {
    const char c = f[i];
    if (c == '"') in_string = !in_string;
    const bool boundary =
        i == 0 || !(IsNameChar(f[i - 1]) || f[i - 1] == '!' || f[i - 1] == '.' || f[i - 1] == '$');
    if (in_string || !boundary || !(c == '$' || IsUpper(c))) {
      out += c;
      ++i;
      continue;
    }
    // The longest run that could be a reference or a range of references.
    size_t j = i;
    while (j < f.size() && (f[j] == '$' || IsUpper(f[j]) || IsDigit(f[j]) || f[j] == ':')) ++j;
    const std::string_view token = f.substr(i, j - i);
    int c1, c2;
    int64_t r1, r2;
    const bool function = j < f.size() && (f[j] == '(' || IsNameChar(f[j]) || f[j] == '!');
    if (!function && ParseRange(token, &c1, &r1, &c2, &r2)) {
      const std::string shifted = ShiftRange(token, shift);
      out += shifted.empty() ? std::string("#REF!") : shifted;
    } else {
      out += token;
    }
    i = j;
  }
  return out;
}

StatusOr<std::vector<std::string>> ParseSharedStrings(const std::string& xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata)) {
    return InvalidArgument("template: xl/sharedStrings.xml is not well-formed XML");
  }
  // The template is the business service's: nested past kMaxNesting, refused
  // like every tree read from outside (common/nesting.h).
  EC_RETURN_IF_ERROR(
      CheckTreeNesting(doc.root(), "XML").WithContext("template: xl/sharedStrings.xml"));
  std::vector<std::string> strings;
  for (pugi::xml_node si : doc.document_element().children()) {
    if (LocalName(si) != "si") continue;
    std::string text;
    // Plain <t>, or rich runs <r><t>; phonetic <rPh> runs are not shown text.
    for (pugi::xml_node n : si.children()) {
      if (LocalName(n) == "t") text += n.text().get();
      if (LocalName(n) == "r") {
        for (pugi::xml_node t : n.children()) {
          if (LocalName(t) == "t") text += t.text().get();
        }
      }
    }
    strings.push_back(std::move(text));
  }
  return strings;
}

Status LoadSheet(const std::string& part, const std::string& xml,
                 const std::vector<std::string>& shared_strings, TemplateSheet* sheet) {
  sheet->part = part;
  sheet->doc = std::make_unique<pugi::xml_document>();
  const auto parsed = sheet->doc->load_buffer(
      xml.data(), xml.size(),
      pugi::parse_default | pugi::parse_ws_pcdata | pugi::parse_declaration);
  if (!parsed) {
    return InvalidArgument("template: " + part +
                           " is not well-formed XML: " + parsed.description());
  }
  EC_RETURN_IF_ERROR(CheckTreeNesting(sheet->doc->root(), "XML").WithContext("template: " + part));
  for (pugi::xml_node n : sheet->doc->document_element().children()) {
    if (LocalName(n) == "sheetData") sheet->sheet_data = n;
  }
  if (!sheet->sheet_data) return Status::Ok();
  std::string text;
  int64_t prev_row = 0;
  for (pugi::xml_node row : sheet->sheet_data.children()) {
    if (LocalName(row) != "row") continue;
    // r= is optional in OOXML (rows and cells then count on from the previous
    // one); it is filled in here so every later step can rely on it.
    if (!row.attribute("r")) row.append_attribute("r").set_value(prev_row + 1);
    const int64_t r = row.attribute("r").as_llong(0);
    if (r <= prev_row || r > kMaxRow) {
      return InvalidArgument("template: " + part + ": row numbers must increase (row " +
                             std::to_string(r) + " after " + std::to_string(prev_row) + ")");
    }
    prev_row = r;
    bool list_row = false;
    int prev_col = -1;
    for (pugi::xml_node c : row.children()) {
      if (LocalName(c) != "c") continue;
      int col;
      int64_t cell_row;
      if (!c.attribute("r")) {
        c.append_attribute("r").set_value((ColumnName(prev_col + 1) + std::to_string(r)).c_str());
      }
      if (!ParseCellRef(c.attribute("r").value(), &col, &cell_row) || cell_row != r) {
        return InvalidArgument("template: " + part + ": bad cell reference \"" +
                               std::string(c.attribute("r").value()) + "\" in row " +
                               std::to_string(r));
      }
      prev_col = col;
      if (!CellText(c, shared_strings, &text)) continue;
      std::vector<Token> tokens = Tokenize(text);
      if (!HasPlaceholder(tokens)) continue;
      for (const Token& t : tokens) list_row = list_row || t.kind == Token::kField;
      sheet->cells.push_back({c, std::move(tokens), r, col});
    }
    if (!list_row) continue;
    if (sheet->list_row) {
      return InvalidArgument("template: " + part + ": rows " +
                             std::to_string(sheet->list_row_number) + " and " + std::to_string(r) +
                             " both hold {.field} list markers; only one list row is supported");
    }
    sheet->list_row = row;
    sheet->list_row_number = r;
  }
  return Status::Ok();
}

}  // namespace export_center::render::internal
