// storage_bench: a 1M-row export rendered into storage — local disk against an
// S3-compatible store (streaming multipart upload) — rows/s, MB/s and peak
// RSS of each (docs/storage.md#s3). Not run by the tests.
//
// usage: storage_bench [--rows N] [--format xlsx|csv] [--part-mib N] [--queue N]
// S3: the store named by EXPORT_CENTER_S3_ENDPOINT, _BUCKET, _REGION,
// _ACCESS_KEY, _SECRET_KEY (path-style), or else a throwaway S3Proxy started
// with scripts/test-s3.sh and stopped (by its pid) at the end. Each run is a
// forked child, so its peak RSS is its own. S3Proxy shares the machine's
// cores with the writer: on a 2-core machine it competes for CPU.

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "bench/customer_rows.h"
#include "common/byte_sink.h"
#include "http/httplib/httplib_http_client.h"
#include "render/csv_writer.h"
#include "render/xlsx_writer.h"
#include "storage/export_storage.h"
#include "storage/local_export_storage.h"
#include "storage/s3/s3_export_storage.h"

namespace {

namespace ec = export_center;
namespace storage = export_center::storage;

struct Args {
  uint64_t rows = 1000000;
  std::string format = "xlsx";
  int64_t part_mib = 8;
  int queue = 1;
};

uint64_t PeakRssKb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// Renders args.rows rows into one object of `store`; prints one line.
int RenderInto(const std::string& label, storage::ExportStorage* store, const Args& args) {
  const std::string key = storage::MakeObjectKey(1, args.format);
  const auto start = std::chrono::steady_clock::now();
  auto object = store->Create(key);
  if (!object.ok()) return std::fprintf(stderr, "%s\n", object.status().ToString().c_str()), 1;
  ec::CountingSink sink(object->get(), 0);
  ec::render::WriterOptions options;
  options.timezone = "UTC";
  auto writer = args.format == "csv" ? ec::render::NewCsvWriter(&sink, options)
                                     : ec::render::NewXlsxWriter(&sink, options);
  ec::Status s = writer->Begin(bench::Columns());
  ec::task::Row row = bench::ReusableRow();
  gen::Row g;
  for (uint64_t i = 0; s.ok() && i < args.rows; ++i) {
    bench::FillRow(i, &g, &row);
    s = writer->WriteRow(row);
  }
  if (s.ok()) s = writer->Finish().status();
  if (s.ok()) s = (*object)->Commit();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!s.ok()) return std::fprintf(stderr, "%s: %s\n", label.c_str(), s.ToString().c_str()), 1;
  const double mb = static_cast<double>(sink.bytes_written()) / 1e6;
  std::printf("%-6s %-4s rows=%llu  %.2f s  %.0f rows/s  %.1f MB  %.1f MB/s  peak RSS %.1f MB\n",
              label.c_str(), args.format.c_str(), static_cast<unsigned long long>(args.rows),
              seconds, static_cast<double>(args.rows) / seconds, mb, mb / seconds,
              static_cast<double>(PeakRssKb()) / 1024);
  std::fflush(stdout);
  (void)store->Delete(key);
  return 0;
}

// Runs `body` in a forked child and returns its exit code.
template <typename Fn>
int InChild(Fn body) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// A throwaway S3Proxy through the project's script; stopped in the destructor.
class ScriptS3 {
 public:
  ScriptS3() {
    char tmpl[] = "/tmp/ec-s3-bench-XXXXXX";
    dir_ = mkdtemp(tmpl);
    const std::string cmd = std::string(EC_SOURCE_DIR) + "/scripts/test-s3.sh start " + dir_;
    FILE* p = popen(cmd.c_str(), "r");
    char line[512];
    while (p != nullptr && std::fgets(line, sizeof line, p)) {
      std::string l(line);
      while (!l.empty() && l.back() == '\n') l.pop_back();
      const size_t eq = l.find('=');
      if (eq != std::string::npos) env_[l.substr(0, eq)] = l.substr(eq + 1);
    }
    if (p != nullptr) pclose(p);
  }
  ~ScriptS3() {
    const std::string cmd = std::string(EC_SOURCE_DIR) + "/scripts/test-s3.sh stop " + dir_;
    (void)std::system(cmd.c_str());
    std::filesystem::remove_all(dir_);
  }
  std::string Get(const std::string& name) const {
    auto it = env_.find(name);
    return it == env_.end() ? "" : it->second;
  }

 private:
  std::string dir_;
  std::map<std::string, std::string> env_;
};

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rows") args.rows = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--format") args.format = argv[i + 1];
    if (flag == "--part-mib") args.part_mib = std::atoll(argv[i + 1]);
    if (flag == "--queue") args.queue = std::atoi(argv[i + 1]);
  }
  char tmpl[] = "/tmp/ec-storage-bench-XXXXXX";
  const std::string local_dir = mkdtemp(tmpl);
  int failures = InChild([&] {
    auto local = storage::NewLocalExportStorage(local_dir);
    return local.ok() ? RenderInto("local", local->get(), args) : 1;
  });
  std::filesystem::remove_all(local_dir);

  std::unique_ptr<ScriptS3> own;
  storage::S3StorageOptions s3;
  s3.endpoint = Env("EXPORT_CENTER_S3_ENDPOINT");
  auto from = [&](const char* name) { return own ? own->Get(name) : Env(name); };
  if (s3.endpoint.empty()) {
    own = std::make_unique<ScriptS3>();
    s3.endpoint = from("EXPORT_CENTER_S3_ENDPOINT");
  }
  s3.bucket = from("EXPORT_CENTER_S3_BUCKET");
  s3.region = from("EXPORT_CENTER_S3_REGION");
  s3.access_key = from("EXPORT_CENTER_S3_ACCESS_KEY");
  s3.secret_key = from("EXPORT_CENTER_S3_SECRET_KEY");
  s3.path_style = true;
  s3.part_size_bytes = args.part_mib * 1024 * 1024;
  s3.upload_queue_parts = args.queue;
  failures += InChild([&] {
    auto remote = storage::NewS3ExportStorage(s3, ec::http::HttplibClientFactory());
    if (!remote.ok()) return std::fprintf(stderr, "%s\n", remote.status().ToString().c_str()), 1;
    const std::string label = "s3";
    return RenderInto(label, remote->get(), args);
  });
  std::printf("(s3: part %lld MiB, queue %d: a writer holds at most %lld MiB of parts)\n",
              static_cast<long long>(args.part_mib), args.queue,
              static_cast<long long>(args.part_mib * (args.queue + 2)));
  return failures == 0 ? 0 : 1;
}
