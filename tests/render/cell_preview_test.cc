// CellPreview against the real CsvWriter: the same typed rows are written to a
// CSV file, read back with python's csv module, and every preview text must
// equal the field read back — the preview cannot drift from the file. The
// XLSX-only cut at 32 767 UTF-16 units and the refusals are checked directly.

#include "render/cell_preview.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "render/csv_writer.h"
#include "tests/render/test_util.h"

namespace export_center::render {
namespace {

using nlohmann::json;
using task::CellValue;
using task::ColumnType;
using task::Date;
using task::DateTime;
using task::Decimal;
using test_util::FileSink;
using test_util::RunCommand;
using test_util::ScratchDir;

std::vector<task::Column> Columns() {
  return {{"s", "s", ColumnType::kString},   {"i", "i", ColumnType::kInteger},
          {"d", "d", ColumnType::kDecimal},  {"b", "b", ColumnType::kBoolean},
          {"day", "day", ColumnType::kDate}, {"at", "at", ColumnType::kDateTime}};
}

// Hostile strings (formulas, controls, invalid UTF-8, quotes, bidi, emoji) and
// edge values of every type; DATETIMEs across a DST change of the zone.
std::vector<task::Row> Rows() {
  const std::vector<std::string> texts = {"plain",      "=1+1",     "+86 138",    "-5%",
                                          "@SUM(A1)",   "\tTab",    "\rCR",       "\x01=hidden",
                                          "a,\"b\"\nc", "emoji 😀🚚", "bad\xC3(x",  "\xEF\xBF\xBE!",
                                          "  spaced  ", "",         "\u202Ebidi", "中文，逗号"};
  const std::vector<CellValue> numbers = {int64_t{0}, int64_t{-9223372036854775807 - 1},
                                          int64_t{9007199254740993}};
  const std::vector<int64_t> instants = {
      0, -1, 1710054000000, 1710057600000, 1730613600000, 253402300799000};
  std::vector<task::Row> rows;
  for (size_t i = 0; i < texts.size(); ++i) {
    CellValue number = numbers[i % numbers.size()];
    CellValue decimal = Decimal{i % 2 == 0 ? "-0.50" : "68141.10"};
    CellValue day =
        *Date::FromYmd(static_cast<int32_t>(1 + i * 600), static_cast<int32_t>(1 + i % 12), 28);
    CellValue at = DateTime{instants[i % instants.size()]};
    if (i % 5 == 4) number = decimal = day = at = std::monostate{};
    rows.push_back({texts[i], number, decimal, i % 3 == 0, day, at});
  }
  return rows;
}

TEST(CellPreview, EqualsTheCsvFieldsReadBack) {
  ScratchDir dir;
  WriterOptions options;
  options.timezone = "America/New_York";
  const std::string path = dir.File("p.csv");
  const auto rows = Rows();
  {
    FileSink sink(path);
    auto writer = NewCsvWriter(&sink, options);
    ASSERT_TRUE(writer->Begin(Columns()).ok());
    for (const auto& row : rows) ASSERT_TRUE(writer->WriteRow(row).ok());
    ASSERT_TRUE(writer->Finish().ok());
  }
  int rc = 0;
  const std::string out =
      RunCommand(std::string(test_util::kPython) + " " + READ_CSV_PY + " '" + path + "'", &rc);
  ASSERT_EQ(rc, 0) << out;
  const json file = json::parse(out)["rows"];
  ASSERT_EQ(file.size(), rows.size() + 1);

  auto preview = CellPreview::Create(options.timezone, task::FileFormat::kCsv);
  ASSERT_TRUE(preview.ok()) << preview.status().ToString();
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < rows[r].size(); ++c) {
      auto text = preview->Text(rows[r][c]);
      ASSERT_TRUE(text.ok()) << text.status().ToString();
      EXPECT_EQ(*text, file[r + 1][c].get<std::string>()) << "row " << r << " column " << c;
    }
  }
}

TEST(CellPreview, XlsxCutsLongTextAtExcelsLimitAfterTheGuard) {
  auto xlsx = CellPreview::Create("UTC", task::FileFormat::kXlsx);
  auto csv = CellPreview::Create("UTC", task::FileFormat::kCsv);
  ASSERT_TRUE(xlsx.ok() && csv.ok());
  const std::string long_text(40000, 'x');
  EXPECT_EQ(xlsx->Text(long_text)->size(), internal::kMaxCellUnits);
  EXPECT_EQ(csv->Text(long_text)->size(), long_text.size());  // CSV is never cut
  const std::string formula = "=" + long_text;
  const std::string guarded = *xlsx->Text(formula);
  EXPECT_EQ(guarded.size(), internal::kMaxCellUnits);
  EXPECT_EQ(guarded.substr(0, 2), "'=");
  // An emoji is two UTF-16 units and never split.
  const std::string emoji = std::string(internal::kMaxCellUnits - 1, 'y') + "😀";
  EXPECT_EQ(*xlsx->Text(emoji), std::string(internal::kMaxCellUnits - 1, 'y'));
}

TEST(CellPreview, RefusesWhatTheWritersRefuse) {
  EXPECT_EQ(CellPreview::Create("Mars/Olympus", task::FileFormat::kXlsx).status().code(),
            StatusCode::kInvalidArgument);
  auto preview = CellPreview::Create("Asia/Shanghai", task::FileFormat::kXlsx);
  ASSERT_TRUE(preview.ok());
  EXPECT_FALSE(Date::FromYmd(2023, 2, 29).has_value());  // no Date holds it: nothing to refuse
  EXPECT_EQ(*preview->Text(*Date::FromYmd(2024, 2, 29)), "2024-02-29");
  EXPECT_EQ(*preview->Text(DateTime{0}), "1970-01-01 08:00:00");
  EXPECT_EQ(*preview->Text(std::monostate{}), "");
}

}  // namespace
}  // namespace export_center::render
