// xlsx_bench: our XlsxWriter / CsvWriter against libxlsxwriter (constant_memory)
// on the reference "customer list" rows (bench/gen.h).
//
// usage: xlsx_bench [--out DIR] [--level N] [--repeat N]
//                   [--only ours|lxw|csv|csvgz|template|split|rich|encrypted] [ROWS...]
//        (default 200000 1000000)
// --only rich runs the plain XLSX shape and the two rich shapes (issue 45)
// interleaved, --repeat times (default 3), and prints the rich/plain ratio of
// the best run of each: "rich" is the 12 columns under a two-level header
// after a leading order column merged in runs of 3, two labelled columns,
// totals on three numeric columns, two highlights; "rich3" the same with 3
// merged columns in runs of 2 (the worst realistic merge list).
// --only encrypted runs the plain XLSX and the password-protected one (Agile
// Encryption, render/encryption/) interleaved, --repeat times, then the plain
// CSV and the AES-zipped one, and prints encrypted/plain rows/s and peak RSS.
// A watcher thread reads every byte the encrypted writer spools (the files
// open under the spool folder, read as they grow) and counts the signatures a
// plaintext XLSX would show there (ZIP headers, part names, sheet XML).
// Each writer runs in a forked child so peak RSS (VmHWM) is its own. A monitor
// thread samples the sizes of deleted-but-open files (where libxlsxwriter's
// tmpfile() spools rows) to report temp disk use. Not run by the tests.

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xlsxwriter.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/customer_rows.h"
#include "bench/gen.h"
#include "common/byte_sink.h"
#include "render/cell_text.h"
#include "render/csv_writer.h"
#include "render/file_encryption.h"
#include "render/writer.h"
#include "render/xlsx_split_writer.h"
#include "render/xlsx_template_writer.h"
#include "render/xlsx_writer.h"
#include "task/column_options.h"

namespace {

using export_center::ByteSink;
using export_center::Status;
namespace task = export_center::task;
namespace render = export_center::render;
using bench::Columns;
using bench::FillRow;

struct Result {
  double seconds = 0;
  uint64_t file_bytes = 0;
  uint64_t temp_bytes = 0;
  uint64_t peak_rss_kb = 0;
  int ok = 0;
  uint64_t spool_scanned_bytes = 0;  // --only encrypted: what the watcher read
  uint64_t plaintext_hits = 0;       // and the plaintext signatures it found
};

// The key material of the encrypted runs (derived once, before any child).
std::shared_ptr<const std::string> g_material;
std::string g_spool_dir;

uint64_t PeakRssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

// Largest total size of open files that are already unlinked (temp spools).
class TempMonitor {
 public:
  TempMonitor() : thread_([this] { Loop(); }) {}
  ~TempMonitor() { Stop(); }
  uint64_t Stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
    return peak_;
  }

 private:
  void Loop() {
    while (!stop_) {
      uint64_t total = 0;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        char target[4096];
        const ssize_t n = readlink(e.path().c_str(), target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        struct stat st;
        if (std::strstr(target, "(deleted)") != nullptr && stat(e.path().c_str(), &st) == 0 &&
            S_ISREG(st.st_mode)) {
          total += static_cast<uint64_t>(st.st_size);
        }
      }
      if (total > peak_) peak_ = total;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::atomic<bool> stop_{false};
  uint64_t peak_ = 0;
  std::thread thread_;
};

// Reads what is spooled under `dir` as it grows (every file open there, the
// unlinked spool included) and counts plaintext signatures in it.
class PlaintextWatcher {
 public:
  explicit PlaintextWatcher(std::string dir) : dir_(std::move(dir)), thread_([this] { Loop(); }) {}
  ~PlaintextWatcher() { Stop(); }
  void Stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
  }
  uint64_t scanned() const { return scanned_; }
  uint64_t hits() const { return hits_; }

 private:
  void Loop() {
    for (bool last = false; !last;) {
      last = stop_;  // one more pass after the writer finished
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        char target[4096];
        const ssize_t n = readlink(e.path().c_str(), target, sizeof target - 1);
        if (n <= 0) continue;
        const std::string t(target, static_cast<size_t>(n));
        if (t.rfind(dir_ + "/", 0) == 0) ScanTail(e.path().string(), t);
      }
      for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
        ScanTail(e.path().string(), e.path().string());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // Reads from where the last pass stopped (a little before, for a signature
  // across the boundary).
  void ScanTail(const std::string& path, const std::string& key) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return;
    uint64_t& at = offsets_[key];
    const uint64_t from = at > 32 ? at - 32 : 0;
    if (fseeko(f, static_cast<off_t>(from), SEEK_SET) == 0) {
      std::string buf(1 << 20, '\0');
      std::string carry;
      size_t n;
      uint64_t pos = from;
      while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
        const std::string chunk = carry + buf.substr(0, n);
        for (const char* sig : {"PK\x03\x04", "xl/worksheets", "<sheetData", "<row r="}) {
          for (size_t p = chunk.find(sig); p != std::string::npos; p = chunk.find(sig, p + 1)) {
            if (pos - carry.size() + p + std::strlen(sig) > at) ++hits_;
          }
        }
        pos += n;
        carry = chunk.substr(chunk.size() > 32 ? chunk.size() - 32 : 0);
      }
      if (pos > at) {
        scanned_ += pos - at;
        at = pos;
      }
    }
    std::fclose(f);
  }

  std::string dir_;
  std::map<std::string, uint64_t> offsets_;
  std::atomic<bool> stop_{false};
  uint64_t scanned_ = 0;
  uint64_t hits_ = 0;
  std::thread thread_;
};

class FileSink final : public ByteSink {
 public:
  explicit FileSink(const std::string& path) : f_(std::fopen(path.c_str(), "wb")) {}
  ~FileSink() override {
    if (f_ != nullptr) std::fclose(f_);
  }
  Status Append(std::string_view b) override {
    if (std::fwrite(b.data(), 1, b.size(), f_) != b.size()) {
      return export_center::Unavailable("write");
    }
    return Status::Ok();
  }

 private:
  std::FILE* f_;
};

class StringSink final : public ByteSink {
 public:
  Status Append(std::string_view b) override {
    out.append(b);
    return Status::Ok();
  }
  std::string out;
};

// A template for the 12 columns, made with our own XlsxWriter: a title row,
// the header, the list row of {.cN} markers, and a footer with {rowCount}.
std::shared_ptr<const std::string> MakeTemplate() {
  StringSink sink;
  std::vector<task::Column> cols;
  for (int c = 0; c < 12; ++c)
    cols.push_back({.key = "t" + std::to_string(c), .title = gen::HEADERS[c]});
  auto w = render::NewXlsxWriter(&sink, render::WriterOptions{});
  if (!w->Begin(cols).ok()) return nullptr;
  task::Row list(12), blank(12), footer(12);
  for (int c = 0; c < 12; ++c) list[c] = "{.c" + std::to_string(c) + "}";
  footer[0] = std::string("rows: {rowCount}, exported {exportedAt}");
  (void)w->WriteRow(list);
  (void)w->WriteRow(blank);
  (void)w->WriteRow(footer);
  if (!w->Finish().ok()) return nullptr;
  return std::make_shared<const std::string>(std::move(sink.out));
}

enum class Mode {
  kXlsx,
  kCsv,
  kCsvGzip,
  kTemplate,
  kSplit,
  kRich,
  kRich3,
  kEncrypted,
  kEncryptedCsv
};

// The rich shapes: a leading order column (INTEGER) then the 12 columns,
// grouped two levels deep.
std::vector<task::Column> RichColumns(bool worst) {
  std::vector<task::Column> cols = Columns();
  const char* groups[12] = {"客户", "客户", "客户", "联系方式", "联系方式", "联系方式",
                            "账户", "账户", "账户", "账户",     "时间",     "时间"};
  for (int c = 0; c < 12; ++c) cols[c].title_groups = {groups[c]};
  task::Column order{.key = "order", .title = "订单号", .type = task::ColumnType::kInteger};
  order.merge = task::MergeMode::kSameValue;
  cols.insert(cols.begin(), order);
  // cols[1 + c] is customer column c.
  if (worst) {
    cols[2].merge = task::MergeMode::kSameValue;  // code, within the order
    cols[2].merge_within = "order";
    cols[3].merge = task::MergeMode::kSameValue;  // name
    cols[3].merge_within = "order";
  }
  cols[7].labels = {{"ACTIVE", "正常"}, {"FROZEN", "冻结"}, {"CLOSED", "注销"}};
  cols[7].highlight = {.op = task::HighlightOp::kEquals, .values = {"冻结"}, .fill = "#FFC7CE"};
  cols[10].labels = {{"true", "是"}, {"false", "否"}};
  cols[10].label_missing = task::LabelMissing::kFail;
  cols[1].total = task::TotalKind::kCount;
  cols[8].total = task::TotalKind::kSum;
  cols[9].total = task::TotalKind::kAvg;
  cols[9].highlight = {.op = task::HighlightOp::kLess, .values = {"0"}, .font = "#9C0006"};
  cols[1].style.header_fill = "#DDEBF7";
  return cols;
}

// Rich rows: the order number groups rows by 3 (by 2 in the worst shape,
// whose rows come in identical pairs so code and name merge too), and the
// labels are applied before the writer, as the routes do.
int RunRich(render::Writer* writer, uint64_t rows, bool worst) {
  const std::vector<task::Column> cols = RichColumns(worst);
  if (!task::ValidateColumns(cols).ok() || !writer->Begin(cols).ok()) return 0;
  task::ValueLabeler labeler(cols);
  task::Row customer = bench::ReusableRow();
  task::Row row(13);
  gen::Row g;
  for (uint64_t i = 0; i < rows; ++i) {
    const uint64_t source = worst ? i & ~uint64_t{1} : i;
    FillRow(source, &g, &customer);
    row[0] = static_cast<int64_t>(worst ? i / 2 : i / 3);
    for (int c = 0; c < 12; ++c) row[1 + c] = customer[c];
    if (!labeler.Apply(static_cast<int64_t>(i + 1), &row).ok()) return 0;
    if (!writer->WriteRow(row).ok()) return 0;
  }
  return writer->Finish().ok() ? 1 : 0;
}

int RunOurs(const std::string& path, uint64_t rows, int level, Mode mode) {
  FileSink file(path);
  export_center::CountingSink sink(&file, 0);
  render::WriterOptions options;
  options.sheet_name = "客户列表";
  options.timezone = "UTC";  // like libxlsxwriter's worksheet_write_unixtime and the verifier
  options.deflate_level = level;
  std::unique_ptr<render::Writer> writer;
  if (mode == Mode::kEncrypted || mode == Mode::kEncryptedCsv) {
    options.file_key_material = g_material;
    options.spool_directory = g_spool_dir;
    auto made = render::NewWriter(
        mode == Mode::kEncrypted ? task::FileFormat::kXlsx : task::FileFormat::kCsv, &sink,
        options);
    if (!made.ok()) return 0;
    writer = std::move(*made);
  }
  if (writer == nullptr) {
    switch (mode) {
      case Mode::kCsv:
        writer = render::NewCsvWriter(&sink, options);
        break;
      case Mode::kCsvGzip:
        options.csv_gzip = true;
        writer = render::NewCsvWriter(&sink, options);
        break;
      case Mode::kTemplate:
        writer = render::NewXlsxTemplateWriter(&sink, options, MakeTemplate(),
                                               R"({"taskName": "bench"})");
        break;
      case Mode::kSplit:
        options.rows_per_file = 200000;
        writer = render::NewXlsxSplitWriter(&sink, options);
        break;
      default:
        writer = render::NewXlsxWriter(&sink, options);
    }
  }
  if (mode == Mode::kRich || mode == Mode::kRich3) {
    return RunRich(writer.get(), rows, mode == Mode::kRich3);
  }
  if (!writer->Begin(Columns()).ok()) return 0;
  task::Row row(12);
  for (int c : {1, 2, 3, 4, 5, 6}) row[c] = std::string();
  row[7] = row[8] = task::Decimal{};
  gen::Row g;
  for (uint64_t i = 0; i < rows; ++i) {
    FillRow(i, &g, &row);
    if (!writer->WriteRow(row).ok()) return 0;
  }
  return writer->Finish().ok() ? 1 : 0;
}

// Our own libxlsxwriter driver, making the same calls as the reference driver.
int RunLxw(const std::string& path, uint64_t rows) {
  lxw_workbook_options opt;
  std::memset(&opt, 0, sizeof opt);
  opt.constant_memory = LXW_TRUE;
  lxw_workbook* wb = workbook_new_opt(path.c_str(), &opt);
  if (wb == nullptr) return 0;
  lxw_worksheet* ws = workbook_add_worksheet(wb, "客户列表");
  lxw_format* hdr = workbook_add_format(wb);
  format_set_bold(hdr);
  lxw_format* dec = workbook_add_format(wb);
  format_set_num_format(dec, "0.00");
  lxw_format* dts = workbook_add_format(wb);
  format_set_num_format(dts, "yyyy-mm-dd hh:mm:ss");
  lxw_format* dss = workbook_add_format(wb);
  format_set_num_format(dss, "yyyy-mm-dd");
  for (int c = 0; c < 12; ++c) worksheet_write_string(ws, 0, c, gen::HEADERS[c], hdr);
  gen::Row r;
  std::string s;
  for (uint64_t i = 0; i < rows; ++i) {
    gen::make_row(i, r);
    const lxw_row_t row = static_cast<lxw_row_t>(i + 1);
    worksheet_write_number(ws, row, 0, static_cast<double>(r.id), nullptr);
    const std::pair<const char*, size_t> texts[] = {{r.code, r.code_len},
                                                    {r.name, r.name_len},
                                                    {r.contact, r.contact_len},
                                                    {r.phone, 11},
                                                    {r.email, r.email_len}};
    for (int c = 0; c < 5; ++c) {
      s.assign(texts[c].first, texts[c].second);  // libxlsxwriter wants NUL-terminated text
      worksheet_write_string(ws, row, c + 1, s.c_str(), nullptr);
    }
    worksheet_write_string(ws, row, 6, gen::STATUS[r.status], nullptr);
    worksheet_write_number(ws, row, 7, static_cast<double>(r.credit_cents) / 100.0, dec);
    worksheet_write_number(ws, row, 8, static_cast<double>(r.balance_cents) / 100.0, dec);
    worksheet_write_boolean(ws, row, 9, r.active, nullptr);
    worksheet_write_unixtime(ws, row, 10, r.created_at, dts);
    worksheet_write_unixtime(ws, row, 11, static_cast<int64_t>(r.birthday) * 86400, dss);
  }
  return workbook_close(wb) == LXW_NO_ERROR ? 1 : 0;
}

// Runs `fn` in a child process and collects its figures through a pipe.
template <typename Fn>
Result InChild(const std::string& path, Fn fn) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Result r;
    TempMonitor monitor;
    std::unique_ptr<PlaintextWatcher> watcher;
    if (!g_spool_dir.empty()) watcher = std::make_unique<PlaintextWatcher>(g_spool_dir);
    const auto t0 = std::chrono::steady_clock::now();
    r.ok = fn();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.temp_bytes = monitor.Stop();
    if (watcher != nullptr) {
      watcher->Stop();
      r.spool_scanned_bytes = watcher->scanned();
      r.plaintext_hits = watcher->hits();
    }
    r.peak_rss_kb = PeakRssKb();
    std::error_code ec;
    r.file_bytes = std::filesystem::file_size(path, ec);
    if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  Result r;
  if (read(fds[0], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) r.ok = 0;
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return r;
}

// One line per writer; with libxlsxwriter's figures, the ratios to it too.
void Print(const char* name, uint64_t rows, const Result& r, const Result* lxw) {
  std::printf(
      "%-16s rows=%-8llu %s %7.2f s %10.0f rows/s  rss %6.1f MB  temp %7.1f MB  file %7.1f MB",
      name, static_cast<unsigned long long>(rows), r.ok ? "ok  " : "FAIL", r.seconds,
      rows / r.seconds, r.peak_rss_kb / 1024.0, r.temp_bytes / 1048576.0, r.file_bytes / 1048576.0);
  if (lxw != nullptr && lxw->ok && r.ok) {
    std::printf("  vs lxw: speed %.2fx size %.3fx", lxw->seconds / r.seconds,
                static_cast<double>(r.file_bytes) / static_cast<double>(lxw->file_bytes));
  }
  std::printf("\n");
  std::fflush(stdout);
}

// Plain, rich and rich3 interleaved `repeat` times (the machine may be
// shared: interleaving spreads any slowdown over the three), then the ratio of
// the best rows/s of each rich shape to the best plain one.
void RunRichComparison(const std::string& out, uint64_t rows, int level, int repeat) {
  const struct {
    const char* name;
    const char* label;
    Mode mode;
  } shapes[] = {{"plain", "plain xlsx", Mode::kXlsx},
                {"rich", "rich xlsx", Mode::kRich},
                {"rich3", "rich3 xlsx", Mode::kRich3}};
  Result best[3];
  for (int r = 0; r < repeat; ++r) {
    for (int k = 0; k < 3; ++k) {
      const std::string path =
          out + "/bench_" + std::string(shapes[k].name) + "_" + std::to_string(rows) + ".xlsx";
      const Result res = InChild(path, [&] { return RunOurs(path, rows, level, shapes[k].mode); });
      Print(shapes[k].label, rows, res, nullptr);
      if (res.ok && (best[k].ok == 0 || res.seconds < best[k].seconds)) best[k] = res;
    }
  }
  for (int k = 1; k < 3; ++k) {
    if (best[0].ok && best[k].ok) {
      std::printf(
          "%s / plain: speed %.2fx (best of %d), peak rss %.1f MB vs %.1f MB, temp %.1f MB\n",
          shapes[k].label, best[0].seconds / best[k].seconds, repeat, best[k].peak_rss_kb / 1024.0,
          best[0].peak_rss_kb / 1024.0, best[k].temp_bytes / 1048576.0);
    }
  }
}

// Plain and encrypted interleaved `repeat` times, XLSX then CSV; the ratio
// of the best run of each, and what the watcher saw in the spool folder.
void RunEncryptedComparison(const std::string& out, uint64_t rows, int level, int repeat) {
  g_spool_dir = out + "/bench_spool";
  std::filesystem::create_directories(g_spool_dir);
  const auto t0 = std::chrono::steady_clock::now();
  auto material = render::DeriveFileKeyMaterial("bench password 2026");
  if (!material.ok()) return;
  g_material = std::make_shared<const std::string>(std::move(*material));
  std::printf(
      "key material: %zu bytes, derived in %.0f ms (once, at create)\n", g_material->size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  const struct {
    const char* label;
    const char* ext;
    Mode plain;
    Mode encrypted;
  } pairs[] = {{"xlsx", "xlsx", Mode::kXlsx, Mode::kEncrypted},
               {"csv", "zip", Mode::kCsv, Mode::kEncryptedCsv}};
  for (const auto& pair : pairs) {
    Result best[2];
    for (int r = 0; r < repeat; ++r) {
      for (int k = 0; k < 2; ++k) {
        const std::string path = out + "/bench_" + (k ? "encrypted_" : "plain_") +
                                 std::to_string(rows) + "." + (k ? pair.ext : pair.label);
        const Mode mode = k ? pair.encrypted : pair.plain;
        const Result res = InChild(path, [&] { return RunOurs(path, rows, level, mode); });
        Print(k ? (pair.plain == Mode::kXlsx ? "encrypted xlsx" : "aes-zip csv")
                : (pair.plain == Mode::kXlsx ? "plain xlsx" : "plain csv"),
              rows, res, nullptr);
        if (k == 1) {
          std::printf("  spool watcher: %.1f MB read, %llu plaintext signatures\n",
                      res.spool_scanned_bytes / 1048576.0,
                      static_cast<unsigned long long>(res.plaintext_hits));
        }
        if (res.ok && (best[k].ok == 0 || res.seconds < best[k].seconds)) best[k] = res;
      }
    }
    if (best[0].ok && best[1].ok) {
      std::printf("encrypted / plain %s: speed %.2fx (best of %d), peak rss %.1f MB vs %.1f MB\n",
                  pair.label, best[0].seconds / best[1].seconds, repeat,
                  best[1].peak_rss_kb / 1024.0, best[0].peak_rss_kb / 1024.0);
    }
  }
  std::filesystem::remove_all(g_spool_dir);
  g_spool_dir.clear();
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = "/tmp";
  std::string only;  // "ours", "lxw" or "csv": run one writer (for profiling)
  int level = render::WriterOptions{}.deflate_level;
  int repeat = 3;
  std::vector<uint64_t> counts;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--level" && i + 1 < argc) {
      level = std::atoi(argv[++i]);
    } else {
      counts.push_back(std::strtoull(a.c_str(), nullptr, 10));
    }
  }
  if (counts.empty()) counts = {200000, 1000000};
  std::printf("deflate level %d, output in %s\n", level, out.c_str());
  for (uint64_t rows : counts) {
    auto wanted = [&](const char* name) { return only.empty() || only == name; };
    if (only == "rich") {
      RunRichComparison(out, rows, level, repeat);
      continue;
    }
    if (only == "encrypted") {
      RunEncryptedComparison(out, rows, level, repeat);
      continue;
    }
    auto file = [&](const char* stem, const char* ext) {
      return out + "/bench_" + stem + "_" + std::to_string(rows) + "." + ext;
    };
    // libxlsxwriter first, so every other line can show its ratio to it.
    Result lxw;
    const bool have_lxw = wanted("lxw");
    if (have_lxw) {
      const std::string path = file("lxw", "xlsx");
      lxw = InChild(path, [&] { return RunLxw(path, rows); });
      Print("libxlsxwriter", rows, lxw, nullptr);
    }
    const struct {
      const char* name;
      const char* label;
      const char* ext;
      Mode mode;
    } runs[] = {{"ours", "ours xlsx", "xlsx", Mode::kXlsx},
                {"template", "ours template", "xlsx", Mode::kTemplate},
                {"split", "ours split zip", "zip", Mode::kSplit},
                {"csv", "ours csv", "csv", Mode::kCsv},
                {"csvgz", "ours csv.gz", "csv.gz", Mode::kCsvGzip}};
    for (const auto& run : runs) {
      if (!wanted(run.name)) continue;
      const std::string path = file(run.name, run.ext);
      const Result r = InChild(path, [&] { return RunOurs(path, rows, level, run.mode); });
      Print(run.label, rows, r, have_lxw ? &lxw : nullptr);
    }
    std::printf("\n");
  }
  return 0;
}
