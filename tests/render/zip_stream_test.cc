#include "render/zip_stream.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "tests/render/test_util.h"

namespace export_center::render {
namespace {

using test_util::FileSink;
using test_util::RunCommand;
using test_util::ScratchDir;

// python's zipfile as the independent reader: CRC-checks every entry.
std::string PythonZipCheck(const std::string& path) {
  return RunCommand(std::string(test_util::kPython) +
                    " -c \"import sys, zipfile\n"
                    "z = zipfile.ZipFile(sys.argv[1])\n"
                    "bad = z.testzip()\n"
                    "print('bad' if bad else 'ok', len(z.infolist()))\" '" +
                    path + "'");
}

Status WriteEntry(ZipStreamWriter* zip, const std::string& name, std::string_view data) {
  EC_RETURN_IF_ERROR(zip->BeginEntry(name));
  // Uneven slices exercise the deflater's buffering.
  for (size_t at = 0, step = 1; at < data.size(); at += step, step = step * 3 + 1) {
    EC_RETURN_IF_ERROR(zip->Write(data.substr(at, step)));
  }
  return zip->EndEntry();
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class ZipLevels : public ::testing::TestWithParam<int> {};

TEST_P(ZipLevels, EntriesRoundTripThroughUnzipAndPython) {
  ScratchDir dir;
  const std::string path = dir.File("a.zip");
  std::string text;
  for (int k = 0; k < 100000; ++k) text += "<row r=\"" + std::to_string(k) + "\"><c/></row>";
  const std::string noise = RandomBytes(3 << 20, 7);
  uint64_t written = 0;
  {
    FileSink sink(path);
    ZipStreamWriter zip(&sink,
                        ZipOptions{.deflate_level = GetParam(), .output_buffer_bytes = 4096});
    ASSERT_TRUE(WriteEntry(&zip, "xl/text.xml", text).ok());
    ASSERT_TRUE(WriteEntry(&zip, "noise.bin", noise).ok());
    ASSERT_TRUE(WriteEntry(&zip, "empty.txt", "").ok());
    ASSERT_TRUE(WriteEntry(&zip, "目录/名字.xml", "你好").ok());
    ASSERT_TRUE(zip.Finish().ok());
    written = zip.bytes_written();
  }
  EXPECT_EQ(written, std::filesystem::file_size(path));
  int rc = 0;
  const std::string log = RunCommand("unzip -t '" + path + "' 2>&1", &rc);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_EQ(PythonZipCheck(path), "ok 4\n");
  EXPECT_EQ(RunCommand("unzip -p '" + path + "' xl/text.xml"), text);
  EXPECT_EQ(RunCommand("unzip -p '" + path + "' noise.bin"), noise);
}

INSTANTIATE_TEST_SUITE_P(Levels, ZipLevels, ::testing::Values(0, 1, 6, 9));

TEST(ZipStream, ManyEntriesUseZip64EndRecords) {
  ScratchDir dir;
  const std::string path = dir.File("many.zip");
  {
    FileSink sink(path);
    ZipStreamWriter zip(&sink, ZipOptions{});
    for (int k = 0; k < 70000; ++k) {
      ASSERT_TRUE(WriteEntry(&zip, "e" + std::to_string(k), std::to_string(k)).ok());
    }
    ASSERT_TRUE(zip.Finish().ok());
  }
  EXPECT_EQ(PythonZipCheck(path), "ok 70000\n");
  EXPECT_EQ(RunCommand("unzip -p '" + path + "' e69999"), "69999");
}

// A > 4 GiB entry at a > 4 GiB offset: a sparse 4.5 GiB prefix stands in for
// earlier entries (start_offset), then 4 GiB + 1 MiB of zeros (deflated to a
// few MB) and a small entry after it. unzip checks every CRC and size.
TEST(ZipStream, Zip64SizesAndOffsets) {
  ScratchDir dir;
  const std::string path = dir.File("big.zip");
  constexpr uint64_t kPrefix = 9ULL << 29;  // 4.5 GiB hole
  {
    FileSink sink(path);
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(kPrefix)), 0);
    sink.Close();
  }
  FileSink sink(path, "ab");
  ZipStreamWriter zip(&sink, ZipOptions{.deflate_level = 1, .start_offset = kPrefix});
  ASSERT_TRUE(zip.BeginEntry("zeros.bin").ok());
  const std::string mib(1 << 20, '\0');
  for (int k = 0; k < 4097; ++k) ASSERT_TRUE(zip.Write(mib).ok());
  ASSERT_TRUE(zip.EndEntry().ok());
  ASSERT_TRUE(WriteEntry(&zip, "tail.txt", "tail").ok());
  ASSERT_TRUE(zip.Finish().ok());
  sink.Close();
  int rc = 0;
  const std::string log = RunCommand("unzip -t '" + path + "' 2>&1", &rc);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("zeros.bin"), std::string::npos) << log;
  EXPECT_EQ(RunCommand("unzip -p '" + path + "' tail.txt"), "tail");
  const std::string listing =
      RunCommand(std::string(test_util::kPython) +
                 " -c \"import sys, zipfile\n"
                 "for i in zipfile.ZipFile(sys.argv[1]).infolist(): print(i.filename, i.file_size, "
                 "i.header_offset)\" '" +
                 path + "'");
  EXPECT_NE(listing.find("zeros.bin 4296015872 4831838208"), std::string::npos) << listing;
}

TEST(ZipStream, CapStopsWritingAndStaysFailed) {
  ScratchDir dir;
  FileSink file(dir.File("cap.zip"));
  CountingSink capped(&file, 64 * 1024);
  ZipStreamWriter zip(&capped, ZipOptions{.output_buffer_bytes = 16 * 1024});
  ASSERT_TRUE(zip.BeginEntry("noise").ok());
  Status status;
  for (int k = 0; k < 100 && status.ok(); ++k) status = zip.Write(RandomBytes(8192, k));
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded);
  EXPECT_LE(capped.bytes_written(), 64u * 1024);
  EXPECT_EQ(zip.EndEntry().code(), StatusCode::kLimitExceeded);
  EXPECT_EQ(zip.Finish().code(), StatusCode::kLimitExceeded);
}

TEST(ZipStream, RejectsCallsOutOfOrder) {
  ScratchDir dir;
  FileSink file(dir.File("order.zip"));
  ZipStreamWriter zip(&file, ZipOptions{});
  EXPECT_EQ(zip.Write("x").code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace export_center::render
