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
  EXPECT_EQ(done->part_rows, std::vector<int64_t>{static_cast<int64_t>(rows.size())});
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
                                    *Date::FromYmd(2024, 3, 5), DateTime{1709615099123}},
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
    rows.push_back({t, int64_t{9223372036854775807}, Decimal{"-0.50"}, false,
                    *Date::FromYmd(1, 1, 1), DateTime{-1}});
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

std::string ReadCsvJson(const std::string& path) {
  int rc = 0;
  const std::string out =
      RunCommand(std::string(test_util::kPython) + " " + READ_CSV_PY + " '" + path + "'", &rc);
  EXPECT_EQ(rc, 0) << out;
  return out;
}

// Gzip: python's gzip module reads back the same fields as the plain file,
// and `gzip -t` accepts the stream.
TEST(CsvWriter, GzipRoundTrips) {
  ScratchDir dir;
  std::vector<task::Row> rows;
  for (int64_t k = 0; k < 20000; ++k) {
    rows.push_back({"客户 " + std::to_string(k) + ", \"q\"", k, Decimal{"12.50"}, k % 2 == 0,
                    *Date::FromYmd(2024, 1, 1 + static_cast<int>(k % 28)), DateTime{k * 1000}});
  }
  WriterOptions plain_options;
  WriterOptions gzip_options;
  gzip_options.csv_gzip = true;
  const std::string plain = dir.File("p.csv");
  const std::string zipped = dir.File("p.csv.gz");
  WriteCsv(plain, rows, plain_options);
  const std::string gz_bytes = WriteCsv(zipped, rows, gzip_options);
  ASSERT_GE(gz_bytes.size(), 10u);
  EXPECT_EQ(gz_bytes.substr(0, 2), "\x1f\x8b");
  int rc = 0;
  RunCommand("gzip -t '" + zipped + "'", &rc);
  EXPECT_EQ(rc, 0);
  const json a = json::parse(ReadCsvJson(plain));
  const json b = json::parse(ReadCsvJson(zipped));
  EXPECT_EQ(a, b);
  EXPECT_EQ(b["rows"].size(), rows.size() + 1);
  EXPECT_EQ(b["rows"][20000][0], "客户 19999, \"q\"");
}

TEST(CsvWriter, GzipSizeCapCountsCompressedBytes) {
  ScratchDir dir;
  FileSink file(dir.File("c.csv.gz"));
  CountingSink capped(&file, 64 * 1024);
  WriterOptions options;
  options.csv_gzip = true;
  auto writer = NewCsvWriter(&capped, options);
  ASSERT_TRUE(writer->Begin(Columns()).ok());
  Status status;
  uint64_t x = 88172645463325252ULL;
  for (int k = 0; k < 100000 && status.ok(); ++k) {
    std::string cell(200, ' ');
    for (char& c : cell) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>('a' + x % 26);
    }
    status = writer->WriteRow(
        {cell, int64_t{k}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}});
  }
  if (status.ok()) status = writer->Finish().status();
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded) << status.ToString();
  EXPECT_LE(capped.bytes_written(), 64u * 1024);
}

// The second independent reader: LibreOffice imports the CSV as UTF-8 and
// writes it back; every field must survive, hostile text included.
TEST(CsvWriter, LibreOfficeReadsEveryField) {
  ScratchDir dir;
  std::string long_cell;
  for (int k = 0; k < 10000; ++k) long_cell += "长文本";  // 30 000 characters
  const std::vector<std::string> texts = {"plain",
                                          "comma, inside",
                                          "quote \"q\"",
                                          "=SUM(A1)",
                                          "@x",
                                          "😀 emoji",
                                          "مرحبا بالعالم",
                                          "bad\xff"
                                          "utf8",
                                          long_cell};
  const std::vector<std::string> want = {
      "plain",   "comma, inside", "quote \"q\"",         "'=SUM(A1)", "'@x",
      "😀 emoji", "مرحبا بالعالم", "bad\xEF\xBF\xBDutf8", long_cell};
  std::vector<task::Row> rows;
  for (const auto& t : texts) {
    rows.push_back({t, int64_t{10000000001}, Decimal{"-1234.50"}, true, *Date::FromYmd(2024, 3, 5),
                    DateTime{1709615099123}});
  }
  const std::string path = dir.File("lo_in.csv");
  WriteCsv(path, rows);
  int rc = 0;
  // Import as UTF-8 (76), comma separated, every column as text (2) so LibreOffice
  // shows the file's own characters; export the same way.
  const std::string log =
      RunCommand("cd '" + dir.path() + "' && HOME='" + dir.path() +
                     "' timeout 180 soffice --headless -env:UserInstallation=file://" + dir.path() +
                     "/lo-profile --infilter='CSV:44,34,76,1,1/2/2/2/3/2/4/2/5/2/6/2' "
                     "--convert-to 'csv:Text - txt - csv (StarCalc):44,34,76' --outdir '" +
                     dir.path() + "/out' '" + path + "' 2>&1",
                 &rc);
  ASSERT_EQ(rc, 0) << log;
  const json got = json::parse(ReadCsvJson(dir.path() + "/out/lo_in.csv"));
  ASSERT_EQ(got["rows"].size(), texts.size() + 1);
  EXPECT_EQ(got["rows"][0][0], "名称, \"全称\"");
  for (size_t r = 0; r < texts.size(); ++r) {
    const json& row = got["rows"][r + 1];
    EXPECT_EQ(row[0], want[r]) << "row " << r;
    EXPECT_EQ(row[1], "10000000001");
    EXPECT_EQ(row[2], "-1234.50");
    EXPECT_EQ(row[3], "TRUE");
    EXPECT_EQ(row[4], "2024-03-05");
    EXPECT_EQ(row[5], "2024-03-05 13:04:59");
  }
}

}  // namespace
}  // namespace export_center::render
