#include "render/xlsx_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "common/byte_sink.h"
#include "storage/local_export_storage.h"
#include "tests/render/test_util.h"

namespace export_center::render {
namespace {

using nlohmann::json;
using task::CellValue;
using task::Column;
using task::ColumnType;
using task::Date;
using task::DateTime;
using task::Decimal;
using test_util::FileSink;
using test_util::RunCommand;
using test_util::ScratchDir;

std::vector<Column> AllTypeColumns() {
  return {
      {.key = "name", .title = "名称", .type = ColumnType::kString, .width = 20},
      {.key = "qty", .title = "数量", .type = ColumnType::kInteger},
      {.key = "amount", .title = "金额", .type = ColumnType::kDecimal, .scale = 2},
      {.key = "ok", .title = "启用", .type = ColumnType::kBoolean},
      {.key = "day", .title = "日期", .type = ColumnType::kDate},
      {.key = "at", .title = "创建时间", .type = ColumnType::kDateTime, .width = 300},
  };
}

// Writes `rows` to an XLSX file and returns the reader's JSON dump.
json WriteAndRead(const std::vector<Column>& columns, const std::vector<task::Row>& rows,
                  const WriterOptions& options, const std::string& path,
                  WriteSummary* summary = nullptr) {
  FileSink sink(path);
  EXPECT_TRUE(sink.ok());
  auto writer = NewXlsxWriter(&sink, options);
  EXPECT_TRUE(writer->Begin(columns).ok());
  for (const auto& row : rows) {
    Status s = writer->WriteRow(row);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  auto done = writer->Finish();
  EXPECT_TRUE(done.ok()) << done.status().ToString();
  if (done.ok() && summary != nullptr) *summary = *done;
  sink.Close();
  int rc = 0;
  const std::string out =
      RunCommand(std::string(test_util::kPython) + " " + READ_XLSX_PY + " '" + path + "'", &rc);
  EXPECT_EQ(rc, 0) << out;
  return json::parse(out, nullptr, /*allow_exceptions=*/false);
}

json Cell(const json& v, const std::string& t, const std::string& fmt) {
  return {{"v", v}, {"t", t}, {"fmt", fmt}, {"bold", false}};
}

int64_t EpochMs(int y, int mo, int d, int h, int mi, int s, int ms) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

TEST(XlsxWriter, EveryTypeAndTrickyTextRoundTrips) {
  ScratchDir dir;
  const std::string s = "General", i = "0", dec = "0.00", dt = "yyyy-mm-dd hh:mm:ss",
                    day = "yyyy-mm-dd";
  struct Case {
    std::vector<CellValue> row;
    std::vector<json> want;  // null: no cell
  };
  const std::vector<Case> cases = {
      {{std::string("上海华鑫有限公司"), int64_t{42}, Decimal{"68141.10"}, true,
        *Date::FromYmd(2024, 3, 5), DateTime{EpochMs(2024, 3, 5, 5, 4, 59, 123)}},
       {Cell("上海华鑫有限公司", "str", s), Cell(42, "int", i), Cell("68141.1", "float", dec),
        Cell(true, "bool", s), Cell("2024-03-05T00:00:00", "datetime", day),
        Cell("2024-03-05T13:04:59.123000", "datetime", dt)}},
      {{std::string("😀 emoji 👍🏽"), int64_t{9223372036854775807}, Decimal{"-1234.50"},
        false, *Date::FromYmd(1900, 3, 1), DateTime{0}},
       {Cell("😀 emoji 👍🏽", "str", s), Cell(9223372036854775807LL, "int", i),
        Cell("-1234.5", "float", dec), Cell(false, "bool", s),
        Cell("1900-03-01T00:00:00", "datetime", day), Cell("1970-01-01T08:00:00", "datetime", dt)}},
      {{std::string("مرحبا بالعالم"), int64_t{-7}, Decimal{"0.00"}, std::monostate{},
        std::monostate{}, std::monostate{}},
       {Cell("مرحبا بالعالم", "str", s), Cell(-7, "int", i), Cell("0.0", "float", dec), nullptr,
        nullptr, nullptr}},
      {{std::monostate{}, std::monostate{}, Decimal{"123456789012.34"}, true,
        *Date::FromYmd(9999, 12, 31), DateTime{EpochMs(2023, 12, 31, 16, 0, 0, 0)}},
       {nullptr, nullptr, Cell("123456789012.34", "float", dec), Cell(true, "bool", s),
        Cell("9999-12-31T00:00:00", "datetime", day), Cell("2024-01-01T00:00:00", "datetime", dt)}},
      // Dates Excel cannot hold as serial numbers become ISO text.
      {{std::string("a\x01"
                    "b\x1f"
                    "c\td\ne\rf\xff"),
        int64_t{0}, Decimal{"5"}, false, *Date::FromYmd(1899, 12, 31),
        DateTime{EpochMs(1800, 1, 1, 0, 0, 0, 0)}},
       {Cell("abc\td\ne\rf\xEF\xBF\xBD", "str", s), Cell(0, "int", i), Cell(5, "int", dec),
        Cell(false, "bool", s), Cell("1899-12-31", "str", s),
        Cell("1800-01-01 08:05:43", "str", s)}},
      {{std::string("=SUM(A1:A9)"), std::monostate{}, std::monostate{}, std::monostate{},
        std::monostate{}, std::monostate{}},
       {Cell("'=SUM(A1:A9)", "str", s), nullptr, nullptr, nullptr, nullptr, nullptr}},
      {{std::string("+1")}, {Cell("'+1", "str", s)}},
      {{std::string("-1")}, {Cell("'-1", "str", s)}},
      {{std::string("@cmd")}, {Cell("'@cmd", "str", s)}},
      {{std::string("\tx")}, {Cell("'\tx", "str", s)}},
      {{std::string("\rx")}, {Cell("'\rx", "str", s)}},
      {{std::string("\x02=1+1")}, {Cell("'=1+1", "str", s)}},
      {{std::string("  <b>&amp;</b> \"q\" ]]> ")}, {Cell("  <b>&amp;</b> \"q\" ]]> ", "str", s)}},
      {{std::string("")}, {nullptr}},
  };
  std::vector<task::Row> rows;
  for (const Case& c : cases) {
    task::Row row = c.row;
    row.resize(6);  // short cases: the rest is null
    rows.push_back(row);
  }
  WriterOptions options;
  options.sheet_name = "客户列表";
  WriteSummary summary;
  const json got = WriteAndRead(AllTypeColumns(), rows, options, dir.File("all.xlsx"), &summary);
  EXPECT_EQ(summary.rows, static_cast<int64_t>(rows.size()));
  EXPECT_EQ(summary.truncated_cells, 0);
  ASSERT_EQ(got["sheets"].size(), 1u);
  const json& sheet = got["sheets"][0];
  if (::testing::Test::HasFailure() || std::getenv("EC_DUMP")) std::cerr << got.dump(1) << "\n";
  EXPECT_EQ(sheet["name"], "客户列表");
  EXPECT_EQ(sheet["freeze"], "A2");
  EXPECT_EQ(sheet["widths"]["A"], 20.0);
  EXPECT_EQ(sheet["widths"]["B"], 10.0);   // default from the title
  EXPECT_EQ(sheet["widths"]["F"], 255.0);  // capped
  const json& header = sheet["rows"][0];
  const char* titles[] = {"名称", "数量", "金额", "启用", "日期", "创建时间"};
  for (int c = 0; c < 6; ++c) {
    EXPECT_EQ(header[c]["v"], titles[c]);
    EXPECT_EQ(header[c]["bold"], true);
  }
  ASSERT_EQ(sheet["rows"].size(), cases.size());  // header + rows; "" makes no cell
  for (size_t r = 0; r < cases.size(); ++r) {
    // A row whose cells are all absent (the "" case) has no row in the reader.
    const json row = r + 1 < sheet["rows"].size() ? sheet["rows"][r + 1] : json::array();
    for (size_t c = 0; c < cases[r].want.size(); ++c) {
      const json actual = c < row.size() ? row[c] : json(nullptr);
      EXPECT_EQ(actual, cases[r].want[c]) << "row " << r << " column " << c;
    }
  }
}

TEST(XlsxWriter, LongCellIsTruncatedAtExcelLimit) {
  ScratchDir dir;
  std::vector<Column> columns = {{.key = "t", .title = "t"}};
  // 40 000 characters; and a cell of emoji whose cut must not split a pair.
  std::string emoji;
  for (int k = 0; k < 20000; ++k) emoji += "😀";
  const std::vector<task::Row> rows = {{std::string(40000, 'x')},
                                       {std::string(32767, 'y')},
                                       {emoji},
                                       {"=" + std::string(32767, 'z')}};
  WriteSummary summary;
  const json got = WriteAndRead(columns, rows, WriterOptions{}, dir.File("long.xlsx"), &summary);
  EXPECT_EQ(summary.truncated_cells, 3);
  const json& r = got["sheets"][0]["rows"];
  EXPECT_EQ(r[1][0]["v"], std::string(32767, 'x'));
  EXPECT_EQ(r[2][0]["v"], std::string(32767, 'y'));
  std::string want_emoji;
  for (int k = 0; k < 16383; ++k) want_emoji += "😀";
  EXPECT_EQ(r[3][0]["v"], want_emoji);
  EXPECT_EQ(r[4][0]["v"], "'=" + std::string(32765, 'z'));
}

TEST(XlsxWriter, SplitsSheetsAndRepeatsHeader) {
  ScratchDir dir;
  std::vector<Column> columns = {{.key = "n", .title = "序号", .type = ColumnType::kInteger},
                                 {.key = "s", .title = "Name"}};
  std::vector<task::Row> rows;
  for (int64_t k = 0; k < 8; ++k) rows.push_back({k, "row" + std::to_string(k)});
  WriterOptions options;
  options.rows_per_sheet = 3;
  options.sheet_name = "A very long sheet name that exceeds 31 [chars]";
  WriteSummary summary;
  const json got = WriteAndRead(columns, rows, options, dir.File("split.xlsx"), &summary);
  ASSERT_EQ(got["sheets"].size(), 3u);
  // The manifest's rows per sheet agree with what openpyxl reads.
  EXPECT_EQ(summary.part_rows, (std::vector<int64_t>{3, 3, 2}));
  int64_t next = 0;
  for (size_t s = 0; s < 3; ++s) {
    const json& sheet = got["sheets"][s];
    EXPECT_LE(sheet["name"].get<std::string>().size(), 31u);
    EXPECT_EQ(sheet["freeze"], "A2");
    const json& r = sheet["rows"];
    EXPECT_EQ(r[0][0]["v"], "序号");
    EXPECT_EQ(r[0][1]["bold"], true);
    ASSERT_EQ(r.size(), s < 2 ? 4u : 3u);
    for (size_t k = 1; k < r.size(); ++k, ++next) {
      EXPECT_EQ(r[k][0]["v"], next);
      EXPECT_EQ(r[k][1]["v"], "row" + std::to_string(next));
    }
  }
  EXPECT_EQ(next, 8);
  EXPECT_EQ(got["sheets"][0]["name"], "A very long sheet name that exc");
  EXPECT_EQ(got["sheets"][1]["name"], "A very long sheet name that (2)");
}

TEST(XlsxWriter, EmptyExportHasHeaderOnly) {
  ScratchDir dir;
  WriteSummary summary;
  const json got =
      WriteAndRead(AllTypeColumns(), {}, WriterOptions{}, dir.File("empty.xlsx"), &summary);
  EXPECT_EQ(summary.part_rows, std::vector<int64_t>{0});
  ASSERT_EQ(got["sheets"].size(), 1u);
  EXPECT_EQ(got["sheets"][0]["rows"].size(), 1u);
}

TEST(XlsxWriter, RejectsBadInput) {
  ScratchDir dir;
  FileSink sink(dir.File("bad.xlsx"));
  WriterOptions options;
  options.timezone = "Mars/Olympus_Mons";
  EXPECT_EQ(NewXlsxWriter(&sink, options)->Begin(AllTypeColumns()).code(),
            StatusCode::kInvalidArgument);
  auto writer = NewXlsxWriter(&sink, WriterOptions{});
  ASSERT_TRUE(writer->Begin(AllTypeColumns()).ok());
  EXPECT_EQ(writer->WriteRow({int64_t{1}}).code(), StatusCode::kInvalidArgument);
  task::Row bad_decimal = {std::monostate{}, std::monostate{}, Decimal{"1,5"},
                           std::monostate{}, std::monostate{}, std::monostate{}};
  EXPECT_EQ(writer->WriteRow(bad_decimal).code(), StatusCode::kInvalidArgument);
  // A day that does not exist never reaches a writer: no Date holds it
  // (common/civil_day.h), so the routes refuse it as a bad value instead.
  EXPECT_FALSE(Date::FromYmd(2023, 2, 29).has_value());
  EXPECT_TRUE(writer->Finish().ok());  // a rejected row leaves the file consistent
}

// An independent second reader: LibreOffice renders the formatted values.
TEST(XlsxWriter, LibreOfficeReadsFormattedValues) {
  ScratchDir dir;
  const std::string path = dir.File("lo.xlsx");
  const std::vector<task::Row> rows = {
      {std::string("上海 \"引号\", 逗号"), int64_t{10000000001}, Decimal{"68141.10"}, true,
       *Date::FromYmd(2024, 3, 5), DateTime{EpochMs(2024, 3, 5, 5, 4, 59, 0)}},
      {std::string("=1+1"), std::monostate{}, Decimal{"-0.50"}, false, std::monostate{},
       std::monostate{}}};
  WriteAndRead(AllTypeColumns(), rows, WriterOptions{}, path);
  int rc = 0;
  const std::string log = RunCommand("cd '" + dir.path() + "' && HOME='" + dir.path() +
                                         "' timeout 180 soffice --headless "
                                         "-env:UserInstallation=file://" +
                                         dir.path() +
                                         "/lo-profile "
                                         "--convert-to 'csv:Text - txt - csv (StarCalc):44,34,76' "
                                         "--outdir '" +
                                         dir.path() + "/out' '" + path + "' 2>&1",
                                     &rc);
  ASSERT_EQ(rc, 0) << log;
  std::ifstream in(dir.path() + "/out/lo.csv");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "名称,数量,金额,启用,日期,创建时间\n"
            "\"上海 \"\"引号\"\", 逗号\",10000000001,68141.10,TRUE,2024-03-05,2024-03-05 13:04:59\n"
            "'=1+1,,-0.50,FALSE,,\n");
}

// Incompressible cells against a small cap: the export stops while writing,
// and the aborted storage object leaves nothing behind.
TEST(XlsxWriter, SizeCapStopsWritingAndLeavesNoFile) {
  ScratchDir dir;
  auto storage = storage::NewLocalExportStorage(dir.path());
  ASSERT_TRUE(storage.ok());
  const std::string key = storage::MakeObjectKey(77, "xlsx");
  auto object = (*storage)->Create(key);
  ASSERT_TRUE(object.ok());
  constexpr uint64_t kCap = 256 * 1024;
  CountingSink capped(object->get(), kCap);
  auto writer = NewXlsxWriter(&capped, WriterOptions{});
  ASSERT_TRUE(writer->Begin({{.key = "r", .title = "random"}}).ok());
  std::mt19937_64 rng(42);
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  Status status;
  int rows = 0;
  for (; rows < 100000 && status.ok(); ++rows) {
    std::string cell(1000, ' ');
    for (char& c : cell) c = alphabet[rng() % alphabet.size()];
    status = writer->WriteRow({cell});
  }
  if (status.ok()) status = writer->Finish().status();
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded) << status.ToString();
  EXPECT_LT(rows, 1000);  // stopped near the cap, not after writing everything
  EXPECT_LE(capped.bytes_written(), kCap);
  EXPECT_EQ(writer->WriteRow({std::string("x")}).code(), StatusCode::kLimitExceeded);
  (*object)->Abort();
  object->reset();
  auto listed = (*storage)->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path())) {
    files += e.is_regular_file();
  }
  EXPECT_EQ(files, 0u);
}

}  // namespace
}  // namespace export_center::render
