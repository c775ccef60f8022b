#include "render/csv_writer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/render/test_util.h"

namespace export_center::render {
namespace {

using nlohmann::json;
using task::Column;
using task::ColumnType;
using task::Date;
using task::DateTime;
using task::Decimal;
using test_util::FileSink;
using test_util::RunCommand;
using test_util::ScratchDir;

std::vector<Column> Columns() {
  return {
      {.key = "name", .title = "名称, \"全称\"", .type = ColumnType::kString},
      {.key = "qty", .title = "数量", .type = ColumnType::kInteger},
      {.key = "amount", .title = "金额", .type = ColumnType::kDecimal, .scale = 2},
      {.key = "ok", .title = "启用", .type = ColumnType::kBoolean},
      {.key = "day", .title = "日期", .type = ColumnType::kDate},
      {.key = "at", .title = "时间", .type = ColumnType::kDateTime},
  };
}

std::string WriteCsv(const std::string& path, const std::vector<task::Row>& rows,
                     const WriterOptions& options = {}) {
  FileSink sink(path);
  auto writer = NewCsvWriter(&sink, options);
  EXPECT_TRUE(writer->Begin(Columns()).ok());
  for (const auto& row : rows) EXPECT_TRUE(writer->WriteRow(row).ok());
  auto done = writer->Finish();
  EXPECT_TRUE(done.ok());
  EXPECT_EQ(done->rows, static_cast<int64_t>(rows.size()));
  sink.Close();
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(CsvWriter, ExactBytes) {
  ScratchDir dir;
  const std::string bytes =
      WriteCsv(dir.File("a.csv"), {{std::string("上海"), int64_t{-5}, Decimal{"68141.10"}, true,
                                    Date{2024, 3, 5}, DateTime{1709615099123}},
                                   {std::monostate{}, std::monostate{}, std::monostate{}, false,
                                    std::monostate{}, std::monostate{}}});
  EXPECT_EQ(bytes,
            "\xEF\xBB\xBF\"名称, \"\"全称\"\"\",数量,金额,启用,日期,时间\r\n"
            "上海,-5,68141.10,TRUE,2024-03-05,2024-03-05 13:04:59\r\n"
            ",,,FALSE,,\r\n");
}

TEST(CsvWriter, PythonCsvReadsBackEveryField) {
  ScratchDir dir;
  const std::vector<std::string> texts = {
      "plain",
      "comma, inside",
      "quote \"q\"",
      "line\nbreak",
      "cr\rlf\r\n",
      "=SUM(A1)",
      "+1",
      "-1",
      "@x",
      "\tx",
      "\rx",
      "😀 emoji",
      "مرحبا",
      "a\x01"
      "b\x7f",
      "bad\xff"
      "utf8",
      "  spaced  ",
      "",
  };
  const std::vector<std::string> want = {
      "plain",
      "comma, inside",
      "quote \"q\"",
      "line\nbreak",
      "cr\rlf\r\n",
      "'=SUM(A1)",
      "'+1",
      "'-1",
      "'@x",
      "'\tx",
      "'\rx",
      "😀 emoji",
      "مرحبا",
      "ab\x7f",
      "bad\xEF\xBF\xBDutf8",
      "  spaced  ",
      "",
  };
  std::vector<task::Row> rows;
  for (const auto& t : texts) {
    rows.push_back(
        {t, int64_t{9223372036854775807}, Decimal{"-0.50"}, false, Date{1, 1, 1}, DateTime{-1}});
  }
  WriterOptions options;
  options.timezone = "UTC";
  const std::string path = dir.File("b.csv");
  WriteCsv(path, rows, options);
  int rc = 0;
  const std::string out =
      RunCommand(std::string(test_util::kPython) + " " + READ_CSV_PY + " '" + path + "'", &rc);
  ASSERT_EQ(rc, 0) << out;
  const json got = json::parse(out);
  EXPECT_TRUE(got["bom"]);
  EXPECT_TRUE(got["crlf"]);
  ASSERT_EQ(got["rows"].size(), texts.size() + 1);
  EXPECT_EQ(got["rows"][0][0], "名称, \"全称\"");
  for (size_t r = 0; r < texts.size(); ++r) {
    const json& row = got["rows"][r + 1];
    EXPECT_EQ(row[0], want[r]) << "row " << r;
    EXPECT_EQ(row[1], "9223372036854775807");
    EXPECT_EQ(row[2], "-0.50");
    EXPECT_EQ(row[3], "FALSE");
    EXPECT_EQ(row[4], "0001-01-01");
    EXPECT_EQ(row[5], "1969-12-31 23:59:59");  // floor, not truncation toward zero
  }
}

TEST(CsvWriter, SizeCapSurfacesAsLimitExceeded) {
  ScratchDir dir;
  FileSink file(dir.File("c.csv"));
  CountingSink capped(&file, 100 * 1024);
  auto writer = NewCsvWriter(&capped, WriterOptions{});
  ASSERT_TRUE(writer->Begin(Columns()).ok());
  Status status;
  for (int k = 0; k < 10000 && status.ok(); ++k) {
    status = writer->WriteRow({std::string(100, 'x'), int64_t{k}, std::monostate{},
                               std::monostate{}, std::monostate{}, std::monostate{}});
  }
  if (status.ok()) status = writer->Finish().status();
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded);
  EXPECT_LE(capped.bytes_written(), 100u * 1024);
}

}  // namespace
}  // namespace export_center::render
