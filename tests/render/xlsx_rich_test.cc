// The rich column options (issue 45) in the XLSX and CSV writers, read back by
// independent readers: openpyxl (read_rich_xlsx.py), LibreOffice's own
// recalculation (recalc_xlsx.py) and python's csv module (read_csv.py).

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "render/csv_writer.h"
#include "render/xlsx_split_writer.h"
#include "render/xlsx_writer.h"
#include "task/column_options.h"
#include "tests/render/test_util.h"

namespace export_center::render {
namespace {

using nlohmann::json;
using task::Column;
using task::ColumnType;
using task::Decimal;
using test_util::FileSink;
using test_util::RunCommand;
using test_util::ScratchDir;

std::string Py(const std::string& script, const std::string& args) {
  int rc = 0;
  const std::string out =
      RunCommand(std::string(test_util::kPython) + " " + script + " " + args, &rc);
  EXPECT_EQ(rc, 0) << out;
  return out;
}

void Write(Writer* writer, const std::vector<Column>& columns, const std::vector<task::Row>& rows) {
  ASSERT_TRUE(task::ValidateColumns(columns).ok()) << task::ValidateColumns(columns).ToString();
  ASSERT_TRUE(writer->Begin(columns).ok());
  for (const auto& row : rows) {
    Status s = writer->WriteRow(row);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  auto done = writer->Finish();
  ASSERT_TRUE(done.ok()) << done.status().ToString();
}

json WriteXlsx(const std::string& path, const std::vector<Column>& columns,
               const std::vector<task::Row>& rows, WriterOptions options = {}) {
  {
    FileSink sink(path);
    auto writer = NewXlsxWriter(&sink, options);
    Write(writer.get(), columns, rows);
  }
  return json::parse(Py(READ_RICH_XLSX_PY, "'" + path + "'"), nullptr, false);
}

json WriteCsv(const std::string& path, const std::vector<Column>& columns,
              const std::vector<task::Row>& rows) {
  {
    FileSink sink(path);
    auto writer = NewCsvWriter(&sink, WriterOptions{});
    Write(writer.get(), columns, rows);
  }
  return json::parse(Py(READ_CSV_PY, "'" + path + "'"), nullptr, false)["rows"];
}

Column Col(std::string key, std::vector<std::string> path, ColumnType type = ColumnType::kString) {
  Column c{.key = std::move(key), .title = path.back(), .type = type};
  path.pop_back();
  c.title_groups = std::move(path);
  return c;
}

// ["单号"] | ["收货信息","电话"] ["收货信息","地址"] | ["金额","含税","元"] ["金额","含税","分"]
// | ["金额","备注"]: three header rows.
std::vector<Column> GroupedColumns() {
  return {Col("no", {"单号"}),
          Col("phone", {"收货信息", "电话"}),
          Col("addr", {"收货信息", "地址"}),
          Col("yuan", {"金额", "含税", "元"}, ColumnType::kInteger),
          Col("fen", {"金额", "含税", "分"}, ColumnType::kInteger),
          Col("memo", {"金额", "备注"})};
}

TEST(XlsxRich, GroupedHeaderMergesFreezesAndRepeatsOnEverySheet) {
  ScratchDir dir;
  std::vector<task::Row> rows;
  for (int i = 0; i < 5; ++i) {
    rows.push_back({std::string("N" + std::to_string(i)), std::string("138"), std::string("上海"),
                    int64_t{i}, int64_t{i * 10}, std::string("m")});
  }
  WriterOptions options;
  options.rows_per_sheet = 3;
  const json got = WriteXlsx(dir.File("h.xlsx"), GroupedColumns(), rows, options);
  ASSERT_EQ(got["sheets"].size(), 2u);
  const std::vector<std::string> merges = {"A1:A3", "B1:C1", "B2:B3", "C2:C3",
                                           "D1:F1", "D2:E2", "F2:F3"};
  for (const json& sheet : got["sheets"]) {
    EXPECT_EQ(sheet["freeze"], "A4");
    EXPECT_EQ(sheet["merged"], json(std::set<std::string>(merges.begin(), merges.end())));
    const json& r = sheet["rows"];
    EXPECT_EQ(r[0], json({"单号", "收货信息", nullptr, "金额", nullptr, nullptr}));
    EXPECT_EQ(r[1], json({nullptr, "电话", "地址", "含税", nullptr, "备注"}));
    EXPECT_EQ(r[2], json({nullptr, nullptr, nullptr, "元", "分", nullptr}));
    for (const char* ref : {"A1", "B1", "D1", "D2", "D3", "F2", "B2"}) {
      EXPECT_TRUE(sheet["styles"][ref]["bold"]) << ref;
      EXPECT_EQ(sheet["styles"][ref]["h"], "center") << ref;
    }
  }
  EXPECT_EQ(got["sheets"][0]["rows"][3][0], "N0");
  EXPECT_EQ(got["sheets"][1]["rows"].size(), 5u);  // 3 header rows + 2 data rows
  EXPECT_EQ(got["sheets"][1]["rows"][4][0], "N4");
}

TEST(XlsxRich, OneLevelTitlesKeepThePlainHeader) {
  ScratchDir dir;
  const json got = WriteXlsx(dir.File("p.xlsx"), {Col("a", {"A"}), Col("b", {"B"})},
                             {{std::string("x"), std::string("y")}});
  const json& sheet = got["sheets"][0];
  EXPECT_EQ(sheet["freeze"], "A2");
  EXPECT_EQ(sheet["merged"], json::array());
  EXPECT_EQ(sheet["styles"]["A1"]["h"], nullptr);
  EXPECT_EQ(sheet["rows"], json::array({json::array({"A", "B"}), json::array({"x", "y"})}));
}

TEST(XlsxRich, CsvWritesOneHeaderRowPerLevel) {
  ScratchDir dir;
  const json rows = WriteCsv(dir.File("h.csv"), GroupedColumns(),
                             {{std::string("N1"), std::string("138"), std::string("上海"),
                               int64_t{1}, int64_t{2}, std::string("m")}});
  EXPECT_EQ(rows, json({{"", "收货信息", "收货信息", "金额", "金额", "金额"},
                        {"", "", "", "含税", "含税", ""},
                        {"单号", "电话", "地址", "元", "分", "备注"},
                        {"N1", "138", "上海", "1", "2", "m"}}));
}

// The merges a writer must produce, computed the obvious way: per sheet, per
// merged column, maximal runs of equal non-empty values that do not cross a
// run boundary of the parent column.
std::set<std::string> ExpectedMerges(const std::vector<Column>& columns,
                                     const std::vector<task::Row>& rows, size_t sheet,
                                     int64_t per_sheet, int first_row) {
  std::set<std::string> out;
  const size_t begin = sheet * per_sheet;
  const size_t end = std::min(rows.size(), begin + per_sheet);
  auto text = [&](size_t r, size_t c) -> std::string {
    const auto* s = std::get_if<std::string>(&rows[r][c]);
    return s == nullptr ? "" : *s;
  };
  auto index_of = [&](const std::string& key) {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].key == key) return static_cast<int>(i);
    }
    return -1;
  };
  // boundary[c][r]: a new run of column c starts at row r.
  std::vector<std::vector<bool>> boundary(columns.size(), std::vector<bool>(rows.size(), false));
  for (size_t c = 0; c < columns.size(); ++c) {
    const int parent = index_of(columns[c].merge_within);
    for (size_t r = begin; r < end; ++r) {
      boundary[c][r] = r == begin || text(r, c).empty() || text(r, c) != text(r - 1, c) ||
                       (parent >= 0 && boundary[parent][r]);
    }
    if (columns[c].merge == task::MergeMode::kNone) continue;
    for (size_t r = begin; r < end;) {
      size_t e = r + 1;
      while (e < end && !boundary[c][e]) ++e;
      if (e - r >= 2) {
        const std::string col(1, static_cast<char>('A' + c));
        out.insert(col + std::to_string(r - begin + first_row) + ":" + col +
                   std::to_string(e - 1 - begin + first_row));
      }
      r = e;
    }
  }
  return out;
}

TEST(XlsxRich, MergedRunsStayWithinTheParentAndTheSheet) {
  ScratchDir dir;
  std::vector<Column> columns = {Col("order", {"订单号"}), Col("day", {"日期"}),
                                 Col("line", {"商品"}), Col("note", {"备注"})};
  columns[0].merge = task::MergeMode::kSameValue;
  columns[1].merge = task::MergeMode::kSameValue;
  columns[1].merge_within = "order";
  columns[3].merge = task::MergeMode::kSameValue;
  // Two orders on one day: the day must not merge across them.
  std::vector<task::Row> rows = {
      {std::string("O1"), std::string("05-01"), std::string("a"), std::string("x")},
      {std::string("O1"), std::string("05-01"), std::string("b"), std::string("x")},
      {std::string("O2"), std::string("05-01"), std::string("c"), std::string("")},
      {std::string("O2"), std::string("05-01"), std::string("d"), std::string("")},
      // sheet 2 from here (4 rows per sheet): O2 continues but starts a new run
      {std::string("O2"), std::string("05-02"), std::string("f"), std::string("y")},
      {std::string("O2"), std::string("05-02"), std::string("g"), std::string("y")},
  };
  WriterOptions options;
  options.rows_per_sheet = 4;
  const json got = WriteXlsx(dir.File("m.xlsx"), columns, rows, options);
  ASSERT_EQ(got["sheets"].size(), 2u);
  EXPECT_EQ(got["sheets"][0]["merged"], json({"A2:A3", "A4:A5", "B2:B3", "B4:B5", "D2:D3"}));
  EXPECT_EQ(got["sheets"][1]["merged"], json({"A2:A3", "B2:B3", "D2:D3"}));
  // The hidden cells of a run are not written; its first cell holds the value.
  EXPECT_EQ(got["sheets"][0]["rows"][1], json({"O1", "05-01", "a", "x"}));
  EXPECT_EQ(got["sheets"][0]["rows"][2], json({nullptr, nullptr, "b", nullptr}));
  EXPECT_EQ(got["sheets"][0]["styles"]["A2"]["v"], "center");

  // CSV repeats the value in every row of a run.
  const json csv = WriteCsv(dir.File("m.csv"), columns, rows);
  EXPECT_EQ(csv[2], json({"O1", "05-01", "b", "x"}));
}

TEST(XlsxRich, RandomRunsMatchAnIndependentComputation) {
  ScratchDir dir;
  std::vector<Column> columns = {Col("g", {"g"}), Col("a", {"a"}), Col("b", {"b"}), Col("c", {"c"}),
                                 Col("d", {"d"})};
  columns[0].merge = task::MergeMode::kSameValue;
  columns[1].merge = task::MergeMode::kSameValue;
  columns[1].merge_within = "g";
  columns[2].merge = task::MergeMode::kSameValue;
  columns[2].merge_within = "a";
  columns[4].merge = task::MergeMode::kSameValue;
  std::mt19937 rng(45);
  std::vector<task::Row> rows;
  std::string v[5] = {"0", "0", "0", "0", "0"};
  for (int i = 0; i < 700; ++i) {
    task::Row row;
    for (int c = 0; c < 5; ++c) {
      if (rng() % (c + 2) == 0) v[c] = std::to_string(rng() % 3);
      row.push_back(rng() % 29 == 0 ? task::CellValue{} : task::CellValue{v[c]});
    }
    rows.push_back(std::move(row));
  }
  WriterOptions options;
  options.rows_per_sheet = 250;
  const json got = WriteXlsx(dir.File("r.xlsx"), columns, rows, options);
  ASSERT_EQ(got["sheets"].size(), 3u);
  size_t total = 0;
  for (size_t s = 0; s < 3; ++s) {
    const auto want = ExpectedMerges(columns, rows, s, 250, 2);
    total += want.size();
    EXPECT_EQ(got["sheets"][s]["merged"], json(want)) << "sheet " << s + 1;
  }
  EXPECT_GT(total, 100u);
}

// Cents as exact decimal text, the test's own arithmetic (int64).
std::string CentsText(int64_t cents) {
  const std::string sign = cents < 0 ? "-" : "";
  const int64_t a = cents < 0 ? -cents : cents;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d", static_cast<int>(a % 100));
  return sign + std::to_string(a / 100) + "." + buf;
}

TEST(XlsxRich, TotalsAcrossSheetsAreExactAndLibreOfficeAgrees) {
  ScratchDir dir;
  std::vector<Column> columns = {Col("name", {"名称"}),
                                 Col("amount", {"金额"}, ColumnType::kDecimal),
                                 Col("qty", {"数量"}, ColumnType::kInteger),
                                 Col("low", {"最低"}, ColumnType::kDecimal),
                                 Col("high", {"最高"}, ColumnType::kInteger),
                                 Col("avg", {"平均"}, ColumnType::kDecimal),
                                 Col("iavg", {"整数平均"}, ColumnType::kInteger)};
  columns[1].total = task::TotalKind::kSum;
  columns[2].total = task::TotalKind::kCount;
  columns[3].total = task::TotalKind::kMin;
  columns[4].total = task::TotalKind::kMax;
  columns[5].total = task::TotalKind::kAvg;
  columns[6].total = task::TotalKind::kAvg;
  int64_t sum = 0, count = 0, low = INT64_MAX, high = INT64_MIN, avg_sum = 0, iavg_sum = 0;
  std::vector<task::Row> rows;
  for (int i = 0; i < 23; ++i) {
    // 0.10 + 0.20-style cents that binary floating point would not add exactly.
    const int64_t cents = (i * 7919) % 100003 - 30000 + 10;
    const bool null_qty = i % 5 == 0;
    task::Row row = {std::string("r" + std::to_string(i)),
                     Decimal{CentsText(cents)},
                     null_qty ? task::CellValue{} : task::CellValue{int64_t{i}},
                     Decimal{CentsText(-cents * 3)},
                     int64_t{i * i - 40},
                     Decimal{CentsText(cents + 1)},
                     int64_t{i % 4}};
    sum += cents;
    if (!null_qty) ++count;
    low = std::min(low, -cents * 3);
    high = std::max<int64_t>(high, i * i - 40);
    avg_sum += cents + 1;
    iavg_sum += i % 4;
    rows.push_back(std::move(row));
  }
  // Average rounded half away from zero at scale 2 (cents), integer arithmetic.
  auto round_div = [](int64_t a, int64_t b) {
    const int64_t q = a / b, r = a % b;
    return q + ((r < 0 ? -r : r) * 2 >= b ? (a < 0 ? -1 : 1) : 0);
  };
  const std::string want_avg = CentsText(round_div(avg_sum, 23));
  const std::string want_iavg = CentsText(round_div(iavg_sum * 100, 23));
  WriterOptions options;
  options.rows_per_sheet = 10;
  options.sheet_name = "O'Brien";
  options.totals_label = "合计";
  const std::string path = dir.File("t.xlsx");
  const json got = WriteXlsx(path, columns, rows, options);
  ASSERT_EQ(got["sheets"].size(), 3u);
  const json& last = got["sheets"][2];
  // 1 header row + 3 data rows, then the totals row at row 5.
  ASSERT_EQ(last["rows"].size(), 5u);
  EXPECT_EQ(last["rows"][4][0], "合计");
  EXPECT_EQ(last["rows"][4][1],
            "=SUM('O''Brien'!B2:B11,'O''Brien (2)'!B2:B11,'O''Brien (3)'!B2:B4)");
  EXPECT_EQ(last["rows"][4][5],
            "=ROUND(AVERAGE('O''Brien'!F2:F11,'O''Brien (2)'!F2:F11,'O''Brien (3)'!F2:F4),2)");
  const json& raw = last["raw"];
  EXPECT_EQ(raw["B5"], CentsText(sum));
  EXPECT_EQ(raw["C5"], std::to_string(count));
  EXPECT_EQ(raw["D5"], CentsText(low));
  EXPECT_EQ(raw["E5"], std::to_string(high));
  EXPECT_EQ(raw["F5"], want_avg);
  EXPECT_EQ(raw["G5"], want_iavg);
  // No totals row on the earlier sheets.
  EXPECT_EQ(got["sheets"][0]["raw"], json::object());

  // LibreOffice recalculates every formula (cached values zeroed first) to
  // the same numbers.
  const json lo =
      json::parse(Py(RECALC_XLSX_PY, "'" + path + "' '" + dir.path() + "'"), nullptr, false);
  ASSERT_TRUE(lo.is_object()) << lo.dump();
  auto number = [](const json& v) {
    return v.is_string() ? std::stod(v.get<std::string>()) : v.get<double>();
  };
  for (const char* ref : {"B5", "C5", "D5", "E5", "F5", "G5"}) {
    const json& v = lo["O'Brien (3)!" + std::string(ref)];
    ASSERT_FALSE(v.is_null()) << ref << " " << lo.dump();
    EXPECT_DOUBLE_EQ(number(v), std::stod(raw[ref].get<std::string>())) << ref;
  }

  // CSV: the same exact values in a row after the data.
  const json csv = WriteCsv(dir.File("t.csv"), columns, rows);
  ASSERT_EQ(csv.size(), 25u);
  EXPECT_EQ(csv[24], json({"Total", CentsText(sum), std::to_string(count), CentsText(low),
                           std::to_string(high), want_avg, want_iavg}));
}

TEST(XlsxRich, TotalsOfNoRowsAndOneSheet) {
  ScratchDir dir;
  std::vector<Column> columns = {Col("n", {"n"}), Col("a", {"a"}, ColumnType::kDecimal),
                                 Col("v", {"v"}, ColumnType::kDecimal)};
  columns[1].total = task::TotalKind::kSum;
  columns[2].total = task::TotalKind::kAvg;
  const json none = WriteXlsx(dir.File("n.xlsx"), columns, {});
  EXPECT_EQ(none["sheets"][0]["rows"][1], json({"Total", "0.0", nullptr}));
  const json one = WriteXlsx(dir.File("o.xlsx"), columns,
                             {{std::string("x"), Decimal{"0.10"}, Decimal{"0.10"}},
                              {std::string("y"), Decimal{"0.20"}, std::monostate{}}});
  const json& sheet = one["sheets"][0];
  EXPECT_EQ(sheet["rows"][3][1], "=SUM(B2:B3)");
  EXPECT_EQ(sheet["raw"]["B4"], "0.30");
  EXPECT_EQ(sheet["raw"]["C4"], "0.10");
}

TEST(XlsxRich, ConditionalFormatsAreOneRulePerColumnPerSheet) {
  ScratchDir dir;
  std::vector<Column> columns = {Col("status", {"状态"}),
                                 Col("amount", {"金额"}, ColumnType::kDecimal),
                                 Col("qty", {"数量"}, ColumnType::kInteger), Col("tag", {"标签"})};
  columns[0].highlight = {
      .op = task::HighlightOp::kEquals, .values = {"已\"付"}, .fill = "#FFC7CE"};
  columns[1].highlight = {
      .op = task::HighlightOp::kGreater, .values = {"1000.5"}, .font = "#9C0006"};
  columns[2].highlight = {
      .op = task::HighlightOp::kLess, .values = {"0"}, .fill = "#00FF00", .font = "#0000ff"};
  columns[3].highlight = {.op = task::HighlightOp::kIn, .values = {"a", "b&c"}, .fill = "#123456"};
  std::vector<task::Row> rows(
      5, {std::string("已\"付"), Decimal{"2000.00"}, int64_t{-1}, std::string("a")});
  WriterOptions options;
  options.rows_per_sheet = 3;
  const json got = WriteXlsx(dir.File("c.xlsx"), columns, rows, options);
  ASSERT_EQ(got["sheets"].size(), 2u);
  EXPECT_EQ(got["sheets"][0]["cf"], json::parse(R"J([
    {"sqref": "A2:A4", "type": "cellIs", "operator": "equal", "formula": ["\"已\"\"付\""],
     "fill": "FFFFC7CE", "font": null},
    {"sqref": "B2:B4", "type": "cellIs", "operator": "greaterThan", "formula": ["1000.5"],
     "fill": null, "font": "FF9C0006"},
    {"sqref": "C2:C4", "type": "cellIs", "operator": "lessThan", "formula": ["0"],
     "fill": "FF00FF00", "font": "FF0000FF"},
    {"sqref": "D2:D4", "type": "expression", "operator": null,
     "formula": ["OR(D2=\"a\",D2=\"b&c\")"], "fill": "FF123456", "font": null}])J"));
  EXPECT_EQ(got["sheets"][1]["cf"][0]["sqref"], "A2:A3");
}

TEST(XlsxRich, StylesTravelWithTheColumns) {
  ScratchDir dir;
  std::vector<Column> columns = {Col("a", {"A"}), Col("b", {"B"}, ColumnType::kDecimal)};
  columns[0].style = {.header_fill = "#1F4E78", .header_font = "#FFFFFF", .wrap = true};
  columns[1].style = {.align = task::Align::kRight};
  const json got = WriteXlsx(dir.File("s.xlsx"), columns, {{std::string("x"), Decimal{"1.50"}}});
  const json& st = got["sheets"][0]["styles"];
  EXPECT_EQ(st["A1"]["fill"], "FF1F4E78");
  EXPECT_EQ(st["A1"]["font"], "FFFFFFFF");
  EXPECT_TRUE(st["A1"]["bold"]);
  EXPECT_EQ(st["B1"]["fill"], nullptr);
  EXPECT_TRUE(st["A2"]["wrap"]);
  EXPECT_EQ(st["B2"]["h"], "right");
  EXPECT_EQ(got["sheets"][0]["rows"][1], json({"x", "1.5"}));
}

TEST(XlsxRich, LabelsAppliedBeforeTheWriterShowInTheFile) {
  ScratchDir dir;
  std::vector<Column> columns = {Col("status", {"状态"}),
                                 Col("level", {"等级"}, ColumnType::kInteger)};
  columns[0].labels = {{"PAID", "已支付"}, {"NEW", "新建"}};
  columns[0].label_missing = task::LabelMissing::kKeep;
  columns[1].labels = {{"1", "普通"}, {"2", "黄金"}};
  columns[1].label_missing = task::LabelMissing::kBlank;
  columns[0].highlight = {
      .op = task::HighlightOp::kEquals, .values = {"已支付"}, .fill = "#FFC7CE"};
  std::vector<task::Row> rows = {{std::string("PAID"), int64_t{2}},
                                 {std::string("REFUND"), int64_t{9}},
                                 {std::monostate{}, int64_t{1}}};
  task::ValueLabeler labeler(columns);
  for (size_t i = 0; i < rows.size(); ++i) ASSERT_TRUE(labeler.Apply(i + 1, &rows[i]).ok());
  const json got = WriteXlsx(dir.File("l.xlsx"), columns, rows);
  EXPECT_EQ(got["sheets"][0]["rows"],
            json({{"状态", "等级"}, {"已支付", "黄金"}, {"REFUND", nullptr}, {nullptr, "普通"}}));
  EXPECT_EQ(got["sheets"][0]["cf"][0]["formula"], json({"\"已支付\""}));
}

TEST(XlsxRich, SplitFilesCarryTheirOwnTotalsAndTheManifestTheGrandTotal) {
  ScratchDir dir;
  std::vector<Column> columns = {Col("n", {"n"}), Col("a", {"a"}, ColumnType::kDecimal)};
  columns[1].total = task::TotalKind::kSum;
  std::vector<task::Row> rows;
  for (int i = 0; i < 5; ++i) rows.push_back({std::string("x"), Decimal{"0.10"}});
  const std::string path = dir.File("s.zip");
  {
    FileSink sink(path);
    WriterOptions options;
    options.rows_per_file = 2;
    auto writer = NewXlsxSplitWriter(&sink, options);
    Write(writer.get(), columns, rows);
  }
  const json manifest =
      json::parse(RunCommand(std::string(test_util::kPython) +
                             " -c \"import zipfile,sys; sys.stdout.write(zipfile.ZipFile('" + path +
                             "').read('manifest.json').decode())\""));
  EXPECT_EQ(manifest["totals"], json({{"a", "0.50"}}));
}

}  // namespace
}  // namespace export_center::render
