// Password-protected files (render/encryption/encrypted_writers.h) opened by
// independent readers: msoffcrypto-tool decrypts the Agile-encrypted XLSX
// (password and data-integrity HMAC checked) and openpyxl reads every cell;
// LibreOffice opens it with the password through UNO; pyzipper opens the AES
// zips. The spool folder is scanned while the workbook is being written.

#include "render/encryption/encrypted_writers.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "render/csv_writer.h"
#include "render/file_encryption.h"
#include "render/writer.h"
#include "tests/render/test_util.h"

namespace export_center::render {
namespace {

using nlohmann::json;
using task::Column;
using task::ColumnType;
using test_util::FileSink;
using test_util::RunCommand;
using test_util::ScratchDir;

constexpr const char* kPassword = "Export-密码-2026!";

// One derivation for the whole file: it costs the password hash's spins.
std::shared_ptr<const std::string> Material() {
  static const auto material =
      std::make_shared<const std::string>(*DeriveFileKeyMaterial(kPassword));
  return material;
}

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

// A text no deflate would shrink much and no two rows share.
std::string Marker(int64_t k) { return "SECRET-ROW-" + std::to_string(k) + "-电话13800138000"; }

task::Row Row(int64_t k) { return {k, Marker(k), task::Decimal{std::to_string(k) + ".25"}}; }

std::string Shell(const std::string& s) { return "'" + s + "'"; }

json ReadEncrypted(const std::string& kind, const std::string& path, const std::string& password,
                   int* rc, std::string* err = nullptr) {
  const std::string err_file = path + ".err";
  const std::string out =
      RunCommand(std::string(test_util::kPython) + " " + READ_ENCRYPTED_PY + " " + kind + " " +
                     Shell(path) + " " + Shell(password) + " 2>" + Shell(err_file),
                 rc);
  if (err != nullptr) *err = ReadFile(err_file);
  return *rc == 0 ? json::parse(out) : json();
}

struct Written {
  Status status;
  WriteSummary summary;
};

Written Write(task::FileFormat format, const WriterOptions& options, const std::string& path,
              int64_t rows, const std::function<task::Row(int64_t)>& row = Row,
              const std::function<void(int64_t)>& after_row = nullptr) {
  FileSink sink(path);
  auto writer = NewWriter(format, &sink, options);
  if (!writer.ok()) return {writer.status(), {}};
  Status s = (*writer)->Begin(Columns());
  for (int64_t k = 0; s.ok() && k < rows; ++k) {
    s = (*writer)->WriteRow(row(k));
    if (after_row) after_row(k);
  }
  if (!s.ok()) return {s, {}};
  auto done = (*writer)->Finish();
  if (!done.ok()) return {done.status(), {}};
  return {Status::Ok(), *done};
}

WriterOptions Encrypted() {
  WriterOptions options;
  options.file_key_material = Material();
  return options;
}

void ExpectRows(const json& rows, int64_t count) {
  ASSERT_EQ(rows.size(), static_cast<size_t>(count + 1));
  EXPECT_EQ(rows[0][0]["v"], "序号");
  EXPECT_EQ(rows[0][1]["v"], "名称");
  for (int64_t k = 0; k < count; ++k) {
    const json& r = rows[k + 1];
    ASSERT_EQ(r[0]["v"], k) << k;
    ASSERT_EQ(r[1]["v"], Marker(k)) << k;
    ASSERT_EQ(r[2]["v"], std::to_string(k) + ".25") << k;
  }
}

// 3 000 rows (a package of many segments): the password opens it, the HMAC
// verifies, every cell reads back; a wrong password does not open it.
TEST(EncryptedWriters, AgileXlsxOpensWithThePasswordOnly) {
  ScratchDir dir;
  const std::string path = dir.File("enc.xlsx");
  Written w = Write(task::FileFormat::kXlsx, Encrypted(), path, 3000);
  ASSERT_TRUE(w.status.ok()) << w.status.ToString();
  EXPECT_EQ(w.summary.rows, 3000);
  const std::string bytes = ReadFile(path);
  ASSERT_EQ(bytes.substr(0, 8), std::string("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8));
  EXPECT_EQ(bytes.find("SECRET-ROW"), std::string::npos);

  int rc = 0;
  const json book = ReadEncrypted("xlsx", path, kPassword, &rc);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(book["encryption"], "agile");
  ExpectRows(book["sheets"][0]["rows"], 3000);

  std::string err;
  ReadEncrypted("xlsx", path, "Export-密码-2026?", &rc, &err);
  EXPECT_EQ(rc, 3);
  EXPECT_NE(err.find("InvalidKeyError"), std::string::npos) << err;
}

// Version-4 sectors (the layout of packages past 2 GiB), forced on a small file.
TEST(EncryptedWriters, AgileXlsxWith4096ByteSectors) {
  ScratchDir dir;
  const std::string path = dir.File("v4.xlsx");
  WriterOptions options = Encrypted();
  options.cfb_sector_shift_for_test = 12;
  ASSERT_TRUE(Write(task::FileFormat::kXlsx, options, path, 500).status.ok());
  EXPECT_EQ(ReadFile(path)[26], 4);  // major version
  int rc = 0;
  const json book = ReadEncrypted("xlsx", path, kPassword, &rc);
  ASSERT_EQ(rc, 0);
  ExpectRows(book["sheets"][0]["rows"], 500);
}

// Rows of random text make a package past 7.2 MB: more than the header's 109
// FAT sectors (109 × 128 sectors of 512 bytes), so DIFAT sectors too.
TEST(EncryptedWriters, AgileXlsxLargeEnoughForDifatSectors) {
  ScratchDir dir;
  const std::string path = dir.File("big.xlsx");
  std::mt19937_64 rng(49);
  std::vector<std::string> texts;
  for (int k = 0; k < 35000; ++k) {
    std::string t(240, 'x');  // "x" first: no formula guard
    for (size_t i = 1; i < t.size(); ++i) t[i] = static_cast<char>('!' + rng() % 90);
    texts.push_back(t);
  }
  auto row = [&](int64_t k) -> task::Row { return {k, texts[k], task::Decimal{"1.00"}}; };
  WriterOptions options = Encrypted();
  ASSERT_TRUE(Write(task::FileFormat::kXlsx, options, path, 35000, row).status.ok());
  const std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 109u * 128 * 512);
  EXPECT_EQ(bytes[72], 1);  // one DIFAT sector
  int rc = 0;
  const json book = ReadEncrypted("xlsx", path, kPassword, &rc);
  ASSERT_EQ(rc, 0);
  const json& rows = book["sheets"][0]["rows"];
  ASSERT_EQ(rows.size(), 35001u);
  for (int k = 0; k < 35000; k += 997) EXPECT_EQ(rows[k + 1][1]["v"], texts[k]) << k;
  EXPECT_EQ(rows[35000][1]["v"], texts[34999]);
}

// Every file a process holds open under `dir`, and every file listed in it.
std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") found.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) {
      const std::string fd = std::string("/proc/self/fd/") + e->d_name;
      char target[4096];
      const ssize_t n = ::readlink(fd.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      if (std::string(target, n).rfind(dir + "/", 0) == 0) found.push_back(fd);
    }
    ::closedir(d);
  }
  return found;
}

struct Scan {
  int files_seen = 0;
  uint64_t bytes_seen = 0;
  int plaintext_hits = 0;
};

// Looks for what a plaintext XLSX would show: ZIP headers, part names, and
// (deflate level 0 stores the XML as is) the rows' own text.
void ScanForPlaintext(const std::string& dir, Scan* scan) {
  for (const std::string& f : FilesUnder(dir)) {
    const std::string bytes = ReadFile(f);
    ++scan->files_seen;
    scan->bytes_seen += bytes.size();
    for (const char* needle : {"PK\x03\x04", "xl/worksheets", "SECRET-ROW", "<sheetData"}) {
      if (bytes.find(needle) != std::string::npos) ++scan->plaintext_hits;
    }
  }
}

// The spool folder, scanned every 500 rows while 5 000 rows are written with
// deflate level 0, holds ciphertext only; the same scan finds the plaintext
// of a plain workbook written there (the scan can see).
TEST(EncryptedWriters, SpoolFolderHoldsNoPlaintextDuringTheWrite) {
  ScratchDir out;
  ScratchDir spool;
  WriterOptions options = Encrypted();
  options.deflate_level = 0;
  options.spool_directory = spool.path();
  Scan scan;
  Written w =
      Write(task::FileFormat::kXlsx, options, out.File("enc.xlsx"), 5000, Row, [&](int64_t k) {
        if (k % 500 == 499) ScanForPlaintext(spool.path(), &scan);
      });
  ASSERT_TRUE(w.status.ok()) << w.status.ToString();
  EXPECT_EQ(scan.plaintext_hits, 0);
  EXPECT_GE(scan.files_seen, 10);                 // the spool was there, open, at every scan
  EXPECT_GT(scan.bytes_seen, 1e6);                // and growing
  EXPECT_TRUE(FilesUnder(spool.path()).empty());  // and gone once the writer is

  WriterOptions plain;
  plain.deflate_level = 0;
  Scan control;
  ASSERT_TRUE(
      Write(task::FileFormat::kXlsx, plain, spool.File("plain.xlsx"), 5000, Row, [&](int64_t k) {
        if (k == 4999) ScanForPlaintext(spool.path(), &control);
      }).status.ok());
  EXPECT_GT(control.plaintext_hits, 0);
}

// LibreOffice opens the workbook with the password and not without it.
TEST(EncryptedWriters, LibreOfficeOpensTheWorkbookWithThePassword) {
  ScratchDir dir;
  const std::string path = dir.File("lo.xlsx");
  ASSERT_TRUE(Write(task::FileFormat::kXlsx, Encrypted(), path, 200).status.ok());
  int rc = 0;
  const std::string cmd =
      std::string(test_util::kPython) + " " + LO_OPEN_ENCRYPTED_PY + " " + Shell(path) + " ";
  const std::string out = RunCommand(cmd + Shell(kPassword) + " " + Shell(dir.path()), &rc);
  ASSERT_EQ(rc, 0) << out;
  const json rows = json::parse(out)["rows"];
  ASSERT_EQ(rows.size(), 201u);
  EXPECT_EQ(rows[0][1], "名称");
  for (int k = 0; k < 200; ++k) {
    ASSERT_EQ(rows[k + 1][0], static_cast<double>(k));
    ASSERT_EQ(rows[k + 1][1], Marker(k));
  }
  RunCommand(cmd + Shell("wrong password") + " " + Shell(dir.path()) + " 2>/dev/null", &rc);
  EXPECT_EQ(rc, 3);
}

// CSV becomes a .zip with one AES-256 (AE-2) entry holding exactly the CSV
// the plain writer makes; pyzipper checks the authentication code.
TEST(EncryptedWriters, CsvInAnAesZip) {
  ScratchDir dir;
  const std::string path = dir.File("enc.zip");
  WriterOptions options = Encrypted();
  options.csv_gzip = true;  // the zip compresses instead
  options.split_file_stem = "客户清单";
  EXPECT_EQ(OutputKindFor(task::FileFormat::kCsv, options), OutputKind::kZip);
  EXPECT_EQ(OutputKindFor(task::FileFormat::kXlsx, options), OutputKind::kXlsx);
  ASSERT_TRUE(Write(task::FileFormat::kCsv, options, path, 2000).status.ok());
  ASSERT_TRUE(
      Write(task::FileFormat::kCsv, WriterOptions{}, dir.File("plain.csv"), 2000).status.ok());
  EXPECT_EQ(ReadFile(path).find("SECRET-ROW"), std::string::npos);

  int rc = 0;
  const json zip = ReadEncrypted("zip", path, kPassword, &rc);
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(zip["entries"].size(), 1u);
  const json& e = zip["entries"][0];
  EXPECT_EQ(e["name"], "客户清单.csv");
  EXPECT_EQ(e["aes"], 3);  // AES-256
  EXPECT_EQ(e["ae"], 2);
  EXPECT_EQ(e["method"], 8);
  EXPECT_EQ(e["text"], ReadFile(dir.File("plain.csv")));

  std::string err;
  ReadEncrypted("zip", path, "nope", &rc, &err);
  EXPECT_EQ(rc, 3);
  EXPECT_NE(err.find("password"), std::string::npos) << err;
}

// Split parts: every workbook and the manifest an AES entry of its own.
TEST(EncryptedWriters, SplitPartsInAnAesZip) {
  ScratchDir dir;
  const std::string path = dir.File("split.zip");
  WriterOptions options = Encrypted();
  options.rows_per_file = 10;
  Written w = Write(task::FileFormat::kXlsx, options, path, 25);
  ASSERT_TRUE(w.status.ok()) << w.status.ToString();
  EXPECT_EQ(w.summary.part_rows, (std::vector<int64_t>{10, 10, 5}));
  int rc = 0;
  const json zip = ReadEncrypted("zip", path, kPassword, &rc);
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(zip["entries"].size(), 4u);
  for (const json& e : zip["entries"]) {
    EXPECT_EQ(e["aes"], 3);
    EXPECT_EQ(e["ae"], 2);
  }
  EXPECT_EQ(zip["entries"][0]["name"], "export_001.xlsx");
  const json& rows = zip["entries"][2]["xlsx"]["sheets"][0]["rows"];
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[5][1]["v"], Marker(24));
  EXPECT_EQ(json::parse(zip["entries"][3]["text"].get<std::string>())["rows"], 25);
}

// Each entry has its own key: past the material's 128 keys the file stops
// with LimitExceeded rather than reuse a key stream.
TEST(EncryptedWriters, SplitStopsBeforeReusingAnEntryKey) {
  ScratchDir dir;
  WriterOptions options = Encrypted();
  options.rows_per_file = 1;
  Written w = Write(task::FileFormat::kXlsx, options, dir.File("many.zip"), 200);
  EXPECT_EQ(w.status.code(), StatusCode::kLimitExceeded) << w.status.ToString();
  EXPECT_NE(w.status.message().find("128"), std::string::npos);
}

TEST(EncryptedWriters, DamagedMaterialFailsBegin) {
  ScratchDir dir;
  WriterOptions options;
  options.file_key_material = std::make_shared<const std::string>("\x01garbage");
  for (auto format : {task::FileFormat::kXlsx, task::FileFormat::kCsv}) {
    Written w = Write(format, options, dir.File("x"), 1);
    EXPECT_EQ(w.status.code(), StatusCode::kInternal);
  }
  options.rows_per_file = 5;
  EXPECT_EQ(Write(task::FileFormat::kXlsx, options, dir.File("y"), 1).status.code(),
            StatusCode::kInternal);
}

}  // namespace
}  // namespace export_center::render
