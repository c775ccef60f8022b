#include "render/xlsx_split_writer.h"

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
using test_util::FileSink;
using test_util::RunCommand;
using test_util::ScratchDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<Column> Columns() {
  return {{.key = "n", .title = "序号", .type = ColumnType::kInteger},
          {.key = "s", .title = "名称"},
          {.key = "d", .title = "金额", .type = ColumnType::kDecimal, .scale = 2}};
}

task::Row Row(int64_t k) {
  return {k, k % 7 == 3 ? "=cmd|' /C calc'!A0" : "名称 " + std::to_string(k),
          task::Decimal{std::to_string(k) + ".50"}};
}

// 25 rows at 10 per file: three workbooks and a manifest, each workbook read
// by openpyxl and by LibreOffice (one conversion for all three).
TEST(XlsxSplitWriter, FilesInOneZipWithManifest) {
  ScratchDir dir;
  const std::string path = dir.File("split.zip");
  {
    FileSink sink(path);
    WriterOptions options;
    options.rows_per_file = 10;
    options.split_file_stem = "客户";
    auto writer = NewXlsxSplitWriter(&sink, options);
    ASSERT_TRUE(writer->Begin(Columns()).ok());
    for (int64_t k = 0; k < 25; ++k) ASSERT_TRUE(writer->WriteRow(Row(k)).ok());
    auto done = writer->Finish();
    ASSERT_TRUE(done.ok()) << done.status().ToString();
    EXPECT_EQ(done->rows, 25);
    EXPECT_EQ(done->part_rows, (std::vector<int64_t>{10, 10, 5}));
  }
  int rc = 0;
  std::string out = RunCommand("cd '" + dir.path() + "' && unzip -q -d x split.zip 2>&1", &rc);
  ASSERT_EQ(rc, 0) << out;
  const json manifest = json::parse(ReadFile(dir.path() + "/x/manifest.json"));
  EXPECT_EQ(manifest["rows"], 25);
  EXPECT_EQ(manifest["rowsPerFile"], 10);
  ASSERT_EQ(manifest["files"].size(), 3u);
  const int64_t want_rows[] = {10, 10, 5};
  int64_t next = 0;
  for (int f = 0; f < 3; ++f) {
    const std::string name = manifest["files"][f]["name"];
    EXPECT_EQ(name, "客户_00" + std::to_string(f + 1) + ".xlsx");
    EXPECT_EQ(manifest["files"][f]["rows"], want_rows[f]);
    const json got = json::parse(RunCommand(std::string(test_util::kPython) + " " + READ_XLSX_PY +
                                            " '" + dir.path() + "/x/" + name + "'"));
    const json& rows = got["sheets"][0]["rows"];
    ASSERT_EQ(rows.size(), static_cast<size_t>(want_rows[f] + 1));
    EXPECT_EQ(rows[0][0]["v"], "序号");
    EXPECT_EQ(rows[0][0]["bold"], true);
    for (size_t r = 1; r < rows.size(); ++r, ++next) {
      EXPECT_EQ(rows[r][0]["v"], next);
      const std::string s = std::get<std::string>(Row(next)[1]);
      EXPECT_EQ(rows[r][1]["v"], s[0] == '=' ? "'" + s : s);
      EXPECT_EQ(rows[r][2]["v"], std::to_string(next) + ".5");
      EXPECT_EQ(rows[r][2]["fmt"], "0.00");
    }
  }
  EXPECT_EQ(next, 25);
  // LibreOffice: one start for the three files.
  out =
      RunCommand("cd '" + dir.path() + "/x' && HOME='" + dir.path() +
                     "' timeout 180 soffice --headless -env:UserInstallation=file://" + dir.path() +
                     "/lo-profile --convert-to 'csv:Text - txt - csv (StarCalc):44,34,76' "
                     "--outdir ../lo *.xlsx 2>&1",
                 &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(ReadFile(dir.path() + "/lo/客户_003.csv"),
            "序号,名称,金额\n20,名称 20,20.50\n21,名称 21,21.50\n22,名称 22,22.50\n"
            "23,名称 23,23.50\n24,'=cmd|' /C calc'!A0,24.50\n");
}

TEST(XlsxSplitWriter, NoRowsIsOneHeaderOnlyFile) {
  ScratchDir dir;
  const std::string path = dir.File("empty.zip");
  {
    FileSink sink(path);
    WriterOptions options;
    options.rows_per_file = 10;
    auto writer = NewXlsxSplitWriter(&sink, options);
    ASSERT_TRUE(writer->Begin(Columns()).ok());
    ASSERT_TRUE(writer->Finish().ok());
  }
  int rc = 0;
  const std::string out = RunCommand(
      std::string(test_util::kPython) + " -c \"import zipfile,json,sys; z=zipfile.ZipFile('" +
          path + "'); print(json.dumps([z.namelist(), json.loads(z.read('manifest.json'))]))\"",
      &rc);
  ASSERT_EQ(rc, 0) << out;
  const json got = json::parse(out);
  EXPECT_EQ(got[0], json({"export_001.xlsx", "manifest.json"}));
  EXPECT_EQ(got[1]["files"][0]["rows"], 0);
}

TEST(XlsxSplitWriter, SizeCapStopsTheZip) {
  ScratchDir dir;
  FileSink file(dir.File("cap.zip"));
  CountingSink capped(&file, 200 * 1024);
  WriterOptions options;
  options.rows_per_file = 50;
  auto writer = NewXlsxSplitWriter(&capped, options);
  ASSERT_TRUE(writer->Begin(Columns()).ok());
  Status status;
  uint64_t x = 88172645463325252ULL;
  for (int k = 0; k < 100000 && status.ok(); ++k) {
    std::string cell(500, ' ');
    for (char& c : cell) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>('a' + x % 26);
    }
    status = writer->WriteRow({int64_t{k}, cell, task::Decimal{"1.00"}});
  }
  if (status.ok()) status = writer->Finish().status();
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded) << status.ToString();
  EXPECT_LE(capped.bytes_written(), 200u * 1024);
}

}  // namespace
}  // namespace export_center::render
