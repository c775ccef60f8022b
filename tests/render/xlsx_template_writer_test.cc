#include "render/xlsx_template_writer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "render/cell_text.h"
#include "render/xlsx_template.h"
#include "tests/render/test_util.h"

namespace export_center::render {
namespace {

using task::Column;
using task::ColumnType;
using test_util::FileSink;
using test_util::RunCommand;
using test_util::ScratchDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Python(const std::string& args, int* rc) {
  return RunCommand(
      std::string(test_util::kPython) + " " + TEMPLATE_CHECK_PY + " " + args + " 2>&1", rc);
}

// The template of template_check.py, made by openpyxl.
std::shared_ptr<const std::string> MakeTemplate(const ScratchDir& dir) {
  int rc = 0;
  const std::string out = Python("make '" + dir.File("template.xlsx") + "'", &rc);
  EXPECT_EQ(rc, 0) << out;
  return std::make_shared<const std::string>(ReadFile(dir.File("template.xlsx")));
}

std::vector<Column> Columns() {
  return {{.key = "id", .title = "编号", .type = ColumnType::kInteger},
          {.key = "name", .title = "名称"},
          {.key = "amount", .title = "金额", .type = ColumnType::kDecimal, .scale = 2},
          {.key = "day", .title = "日期", .type = ColumnType::kDate}};
}

// Mirrors row() in template_check.py.
task::Row Row(int64_t k) {
  std::string name = k % 1000 == 7   ? "=HYPERLINK(\"x\")"
                     : k % 1000 == 8 ? "مرحبا 😀"
                                     : "客户" + std::to_string(k);
  const int64_t cents = k * 137 % 100000000;
  char amount[32];
  std::snprintf(amount, sizeof amount, "%lld.%02lld", static_cast<long long>(cents / 100),
                static_cast<long long>(cents % 100));
  const int64_t day = civil::DaysFromYmd(2020, 1, 1) + static_cast<int64_t>(k % 3000);
  return {k + 1, name, task::Decimal{amount}, *task::Date::FromDays(day)};
}

constexpr const char* kSingles =
    R"({"title": "月度报表", "operator": "张三", "taskName": "客户月报", "rowCount": 1})";

Status Fill(const std::string& path, std::shared_ptr<const std::string> tpl, int64_t rows,
            const std::vector<Column>& columns = Columns()) {
  FileSink sink(path);
  auto writer = NewXlsxTemplateWriter(&sink, WriterOptions{}, std::move(tpl), kSingles);
  EC_RETURN_IF_ERROR(writer->Begin(columns));
  for (int64_t k = 0; k < rows; ++k) EC_RETURN_IF_ERROR(writer->WriteRow(Row(k)));
  auto done = writer->Finish();
  if (!done.ok()) return done.status();
  EXPECT_EQ(done->rows, rows);
  return Status::Ok();
}

// 100 000 rows into the multi-area template; openpyxl checks every cell and
// style, LibreOffice every formatted value and the re-pointed footer SUM.
TEST(XlsxTemplateWriter, MultiAreaTemplateHundredThousandRows) {
  ScratchDir dir;
  auto tpl = MakeTemplate(dir);
  constexpr int64_t kRows = 100000;
  const std::string path = dir.File("filled.xlsx");
  Status s = Fill(path, tpl, kRows);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int rc = 0;
  std::string out = Python(
      "check '" + dir.File("template.xlsx") + "' '" + path + "' " + std::to_string(kRows), &rc);
  EXPECT_EQ(rc, 0) << out;
  const std::string log = RunCommand(
      "cd '" + dir.path() + "' && HOME='" + dir.path() +
          "' timeout 300 soffice --headless -env:UserInstallation=file://" + dir.path() +
          "/lo-profile --convert-to 'csv:Text - txt - csv (StarCalc):44,34,76' --outdir '" +
          dir.path() + "/out' '" + path + "' 2>&1",
      &rc);
  ASSERT_EQ(rc, 0) << log;
  out = Python("check-lo '" + dir.path() + "/out/filled.csv' " + std::to_string(kRows), &rc);
  EXPECT_EQ(rc, 0) << out;
}

// No rows: the list row goes, the footer moves up one row, list merges vanish.
TEST(XlsxTemplateWriter, ZeroRowsRemovesTheListRow) {
  ScratchDir dir;
  auto tpl = MakeTemplate(dir);
  const std::string path = dir.File("empty.xlsx");
  ASSERT_TRUE(Fill(path, tpl, 0).ok());
  int rc = 0;
  const std::string out = Python("check '" + dir.File("template.xlsx") + "' '" + path + "' 0", &rc);
  EXPECT_EQ(rc, 0) << out;
}

TEST(XlsxTemplateWriter, MarkersThatMatchNoColumnArePermanentErrors) {
  ScratchDir dir;
  auto tpl = MakeTemplate(dir);
  std::vector<Column> columns = Columns();
  columns.pop_back();  // no "day"
  columns.push_back({.key = "when", .title = "时间", .type = ColumnType::kDate});
  FileSink sink(dir.File("bad.xlsx"));
  auto writer = NewXlsxTemplateWriter(&sink, WriterOptions{}, tpl, kSingles);
  const Status s = writer->Begin(columns);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("{.day}"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("id, name, amount, when"), std::string::npos) << s.message();
  EXPECT_EQ(writer->WriteRow(Row(0)).code(), StatusCode::kInvalidArgument);
}

TEST(XlsxTemplateWriter, RejectsBrokenTemplatesAndSingles) {
  ScratchDir dir;
  FileSink sink(dir.File("x.xlsx"));
  auto garbage = std::make_shared<const std::string>("PK\x03\x04 not really a zip");
  auto w1 = NewXlsxTemplateWriter(&sink, WriterOptions{}, garbage, "{}");
  const Status s1 = w1->Begin(Columns());
  EXPECT_EQ(s1.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s1.message().find("not a readable .xlsx"), std::string::npos) << s1.message();
  EXPECT_EQ(InspectXlsxTemplate(*garbage).status().code(), StatusCode::kInvalidArgument);
  auto tpl = MakeTemplate(dir);
  auto w2 = NewXlsxTemplateWriter(&sink, WriterOptions{}, tpl, "[1, 2]");
  EXPECT_EQ(w2->Begin(Columns()).code(), StatusCode::kInvalidArgument);
}

TEST(XlsxTemplateWriter, InspectListsPlaceholders) {
  ScratchDir dir;
  auto tpl = MakeTemplate(dir);
  auto info = InspectXlsxTemplate(*tpl);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->list_fields, (std::vector<std::string>{"id", "name", "amount", "day"}));
  EXPECT_EQ(info->single_values,
            (std::vector<std::string>{"exportedAt", "operator", "rowCount", "taskName", "title"}));
  EXPECT_EQ(info->list_sheet, "xl/worksheets/sheet1.xml");
  EXPECT_EQ(info->list_row, 5);
}

TEST(XlsxTemplate, TokenizeAndShift) {
  using internal::Token;
  auto tokens = internal::Tokenize("a {x} {.f}{ y} {1z} {}");
  ASSERT_EQ(tokens.size(), 5u);
  EXPECT_EQ(tokens[0].text, "a ");
  EXPECT_EQ(tokens[1].kind, Token::kSingle);
  EXPECT_EQ(tokens[3].kind, Token::kField);
  EXPECT_EQ(tokens[4].text, "{ y} {1z} {}");
  const internal::RowShift shift{5, 100};
  EXPECT_EQ(internal::ShiftRange("C5:C5", shift), "C5:C104");
  EXPECT_EQ(internal::ShiftRange("A1:E1", shift), "A1:E1");
  EXPECT_EQ(internal::ShiftRange("A8:E9", shift), "A107:E108");
  EXPECT_EQ(internal::ShiftRange("$B$7", shift), "$B$106");
  EXPECT_EQ(internal::ShiftRange("A3:B6", shift), "A3:B105");
  EXPECT_EQ(internal::ShiftRange("E5:F5", internal::RowShift{5, 0}), "");
  EXPECT_EQ(internal::ShiftFormula("SUM(C5:C5)+LOG10(B7)&\"A7\"+Other!A9", shift),
            "SUM(C5:C104)+LOG10(B106)&\"A7\"+Other!A9");
}

// docs/fuzzing.md#nesting: the template .xlsx is the business service's. Its parts nested a
// million deep are refused before anything walks them (common/nesting.h).
TEST(XlsxTemplateParts, PartsNestedAMillionDeepAreRefused) {
  std::string deep;
  for (int i = 0; i < 1000000; ++i) deep += "<r>";
  for (int i = 0; i < 1000000; ++i) deep += "</r>";
  auto strings = internal::ParseSharedStrings("<sst><si>" + deep + "</si></sst>");
  ASSERT_FALSE(strings.ok());
  EXPECT_EQ(strings.status().message(),
            "template: xl/sharedStrings.xml: XML nested deeper than 64 levels");
  internal::TemplateSheet sheet;
  const Status loaded =
      internal::LoadSheet("xl/worksheets/sheet1.xml",
                          "<worksheet><sheetData>" + deep + "</sheetData></worksheet>", {}, &sheet);
  EXPECT_EQ(loaded.message(),
            "template: xl/worksheets/sheet1.xml: XML nested deeper than 64 levels");
}

}  // namespace
}  // namespace export_center::render
