// The ExportStorage contract, run against every backend: local (a temp
// directory) and s3 (a real S3-compatible server, tests/support/s3_server.h).
// What a caller may rely on whatever the backend (docs/storage.md).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "http/httplib/httplib_http_client.h"
#include "storage/export_storage.h"
#include "storage/local_export_storage.h"
#include "storage/s3/s3_export_storage.h"
#include "tests/support/s3_server.h"
#include "tests/support/server_process.h"

namespace export_center::storage {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMiB = 1024 * 1024;

// One S3 server for the whole binary, started on first use and stopped (by
// its pid, through the script) when the binary exits.
S3StorageOptions S3Options(const testing::S3Server& server) {
  S3StorageOptions o;
  o.endpoint = server.endpoint();
  o.region = server.region();
  o.bucket = server.bucket();
  o.access_key = server.access_key();
  o.secret_key = server.secret_key();
  o.path_style = true;
  o.part_size_bytes = 5 * kMiB;  // S3's minimum: several parts per test file
  return o;
}

class ExportStorageContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "local") {
      std::string tmpl = fs::temp_directory_path().string() + "/ec_contract_XXXXXX";
      dir_ = ::mkdtemp(tmpl.data());
      storage_ = NewLocalExportStorage(dir_).value();
      return;
    }
    std::string error;
    testing::S3Server* server = testing::SharedS3Server(/*tls=*/false, &error);
    if (server == nullptr) {
      if (testing::RealServersRequired()) FAIL() << "no S3 server: " << error;
      GTEST_SKIP() << "no S3 server: " << error;
    }
    auto opened = NewS3ExportStorage(S3Options(*server), http::HttplibClientFactory());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    storage_ = std::move(opened).value();
    Empty();  // the bucket is shared by the tests of this binary
  }

  void TearDown() override {
    if (storage_ != nullptr && GetParam() == "s3") Empty();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void Empty() {
    const std::vector<StoredObject> objects = storage_->List().value();
    for (const auto& o : objects) ASSERT_TRUE(storage_->Delete(o.key).ok());
    const std::vector<PartialObject> partials = storage_->ListPartials().value();
    for (const auto& p : partials) ASSERT_TRUE(storage_->DeletePartial(p).ok());
  }

  static std::string Pattern(size_t n, uint32_t seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 2654435761u + seed) >> 13);
    return s;
  }

  // Writes `bytes` in appends of uneven sizes, like a writer's buffer flushes.
  static Status AppendAll(ObjectWriter* w, const std::string& bytes) {
    size_t at = 0, step = 1;
    while (at < bytes.size()) {
      const size_t n = std::min(bytes.size() - at, step * 7919 % 200000 + 1);
      EC_RETURN_IF_ERROR(w->Append(std::string_view(bytes).substr(at, n)));
      at += n;
      ++step;
    }
    return Status::Ok();
  }

  std::string ReadAll(const std::string& key, size_t chunk) {
    auto reader = storage_->Open(key);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return "";
    std::string all, part;
    for (uint64_t at = 0; at < (*reader)->size(); at += chunk) {
      EXPECT_TRUE((*reader)->ReadAt(at, chunk, &part).ok());
      all += part;
    }
    return all;
  }

  std::string dir_;
  std::unique_ptr<ExportStorage> storage_;
};

TEST_P(ExportStorageContract, CommitMakesTheObjectVisibleWhole) {
  const std::string key = MakeObjectKey(42, "xlsx");
  auto writer = storage_->Create(key);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Append("hello ").ok());
  ASSERT_TRUE((*writer)->Append("world").ok());
  EXPECT_FALSE(storage_->Exists(key).value());  // not before Commit
  EXPECT_TRUE(storage_->List().value().empty());
  EXPECT_EQ(storage_->Open(key).status().code(), StatusCode::kNotFound);

  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_TRUE((*writer)->Commit().ok());  // idempotent
  writer->reset();                        // destruction after Commit keeps it
  EXPECT_TRUE(storage_->Exists(key).value());

  auto reader = storage_->Open(key);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->size(), 11u);
  std::string out;
  ASSERT_TRUE((*reader)->ReadAt(6, 100, &out).ok());
  EXPECT_EQ(out, "world");
  ASSERT_TRUE((*reader)->ReadAt(0, 5, &out).ok());
  EXPECT_EQ(out, "hello");
  ASSERT_TRUE((*reader)->ReadAt(11, 5, &out).ok());
  EXPECT_EQ(out, "");

  auto listed = storage_->List().value();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, key);
  EXPECT_EQ(listed[0].size, 11u);
  EXPECT_NEAR(static_cast<double>(listed[0].modified_at_ms),
              static_cast<double>(std::time(nullptr)) * 1000, 120000.0);
  EXPECT_TRUE(storage_->ListPartials().value().empty());
}

TEST_P(ExportStorageContract, LargeFileRoundTripsInRanges) {
  const std::string key = MakeObjectKey(43, "csv.gz");
  const std::string bytes = Pattern(11 * kMiB + 12345, 7);  // three s3 parts
  auto writer = storage_->Create(key).value();
  ASSERT_TRUE(AppendAll(writer.get(), bytes).ok());
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(storage_->List().value().at(0).size, bytes.size());
  EXPECT_TRUE(ReadAll(key, 64 * 1024) == bytes);
  EXPECT_TRUE(ReadAll(key, 3 * kMiB + 1) == bytes);
  // Reads that cross part boundaries and go backwards.
  auto reader = storage_->Open(key).value();
  std::string out;
  for (uint64_t at : {10 * kMiB - 5, 5 * kMiB - 1, 17ul, bytes.size() - 3}) {
    ASSERT_TRUE(reader->ReadAt(at, 10, &out).ok());
    EXPECT_EQ(out, bytes.substr(at, 10)) << at;
  }
}

TEST_P(ExportStorageContract, EmptyFileIsAFile) {
  const std::string key = MakeObjectKey(44, "csv");
  auto writer = storage_->Create(key).value();
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(storage_->Open(key).value()->size(), 0u);
}

TEST_P(ExportStorageContract, AbortAndDestructionLeaveNothing) {
  const std::string key = MakeObjectKey(7, "xlsx");
  {
    auto writer = storage_->Create(key).value();
    ASSERT_TRUE(AppendAll(writer.get(), Pattern(6 * kMiB, 1)).ok());  // past one part
    writer->Abort();
    writer->Abort();  // twice is fine
    EXPECT_FALSE(writer->Commit().ok());
    EXPECT_FALSE(writer->Append("more").ok());
  }
  {
    auto writer = storage_->Create(key).value();
    ASSERT_TRUE(AppendAll(writer.get(), Pattern(11 * kMiB, 2)).ok());
  }  // destroyed without Commit
  {
    auto writer = storage_->Create(key).value();
    ASSERT_TRUE(writer->Append("small").ok());
  }
  EXPECT_FALSE(storage_->Exists(key).value());
  EXPECT_TRUE(storage_->List().value().empty());
  EXPECT_TRUE(storage_->ListPartials().value().empty());
}

TEST_P(ExportStorageContract, DeleteIsIdempotent) {
  const std::string key = MakeObjectKey(8, "zip");
  auto writer = storage_->Create(key).value();
  ASSERT_TRUE(writer->Append("zip bytes").ok());
  ASSERT_TRUE(writer->Commit().ok());
  ASSERT_TRUE(storage_->Delete(key).ok());
  ASSERT_TRUE(storage_->Delete(key).ok());
  EXPECT_FALSE(storage_->Exists(key).value());
  EXPECT_EQ(storage_->Open(key).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(storage_->List().value().empty());
}

// A writer whose process died (never committed, never aborted) leaves a
// partial that names its task; DeletePartial removes it, idempotently.
TEST_P(ExportStorageContract, PartialOfACrashedWriterIsListedAndDeletable) {
  auto writer = storage_->Create(MakeObjectKey(4242, "csv")).value();
  ASSERT_TRUE(AppendAll(writer.get(), Pattern(6 * kMiB, 3)).ok());  // one part sent
  std::vector<PartialObject> partials;
  for (int i = 0; i < 100 && partials.empty(); ++i) {  // the part may still be on its way
    partials = storage_->ListPartials().value();
    if (partials.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(partials.size(), 1u);
  EXPECT_EQ(partials[0].task_id, 4242);
  EXPECT_NEAR(static_cast<double>(partials[0].modified_at_ms),
              static_cast<double>(std::time(nullptr)) * 1000, 120000.0);
  EXPECT_TRUE(storage_->List().value().empty());  // never visible as an object
  writer.release();                               // the "process" dies: no Abort ever runs  NOLINT
  ASSERT_TRUE(storage_->DeletePartial(partials[0]).ok());
  ASSERT_TRUE(storage_->DeletePartial(partials[0]).ok());
  EXPECT_TRUE(storage_->ListPartials().value().empty());
  PartialObject bogus = partials[0];
  bogus.name = "/etc/passwd";
  EXPECT_EQ(storage_->DeletePartial(bogus).code(), StatusCode::kInvalidArgument);
}

TEST_P(ExportStorageContract, RejectsInvalidKeysOnEveryCall) {
  for (const std::string& key : std::vector<std::string>{
           "../escape", "/etc/passwd", "exports/../../x", "exports/2024/03/05/42/x.xlsx", ""}) {
    EXPECT_EQ(storage_->Create(key).status().code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(storage_->Open(key).status().code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(storage_->Delete(key).code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(storage_->Exists(key).status().code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(storage_->PresignedGetUrl(key, {}).status().code(), StatusCode::kInvalidArgument)
        << key;
  }
}

TEST_P(ExportStorageContract, StreamsDownloadsUnlessConfiguredOtherwise) {
  auto url = storage_->PresignedGetUrl(MakeObjectKey(1, "xlsx"), {});
  ASSERT_TRUE(url.ok());
  EXPECT_FALSE(url->has_value());  // the default for every backend
}

TEST_P(ExportStorageContract, ConcurrentWritersAndDeletes) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 6; ++k) {
        const std::string key = MakeObjectKey(1000 + (k % 3), "xlsx");  // shared task folders
        auto w = storage_->Create(key);
        if (!w.ok() || !(*w)->Append(std::to_string(t)).ok() || !(*w)->Commit().ok()) {
          ++failures;
          continue;
        }
        if (k % 2 == 0 && !storage_->Delete(key).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(storage_->List().value().size(), 4u * 3);
}

INSTANTIATE_TEST_SUITE_P(Backends, ExportStorageContract, ::testing::Values("local", "s3"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace export_center::storage
