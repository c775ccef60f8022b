// What only the s3 backend does (the shared contract is in
// export_storage_contract_test.cc): streaming multipart upload while the
// writer still writes, single PUT for small files, a server that dies
// mid-upload, presigned downloads, objects that are not ours.
#include "storage/s3/s3_export_storage.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "http/httplib/httplib_http_client.h"
#include "s3/s3_client.h"
#include "tests/support/s3_server.h"
#include "tests/support/server_process.h"

namespace export_center::storage {
namespace {

constexpr size_t kMiB = 1024 * 1024;

class S3ExportStorageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = testing::S3Server::Start();
    if (server.ok()) {
      server_ = std::move(server).value().release();
    } else {
      start_error_ = new std::string(server.status().ToString());
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    if (server_ == nullptr) {
      if (testing::RealServersRequired()) FAIL() << "no S3 server: " << *start_error_;
      GTEST_SKIP() << "no S3 server: " << *start_error_;
    }
    ASSERT_TRUE(server_->Restart().ok());  // a test may have stopped it
    storage_ = NewS3ExportStorage(Options(), http::HttplibClientFactory()).value();
    s3::S3ClientOptions c;
    c.endpoint = server_->endpoint();
    c.bucket = server_->bucket();
    c.credentials = {server_->access_key(), server_->secret_key()};
    c.path_style = true;
    c.http = http::HttplibClientFactory();
    client_ = s3::S3Client::Create(c).value();
  }

  void TearDown() override {
    if (storage_ == nullptr || !server_->Restart().ok()) return;
    const std::vector<StoredObject> objects = storage_->List().value();
    for (const auto& o : objects) (void)storage_->Delete(o.key);
    const std::vector<PartialObject> partials = storage_->ListPartials().value();
    for (const auto& p : partials) (void)storage_->DeletePartial(p);
  }

  static S3StorageOptions Options() {
    S3StorageOptions o;
    o.endpoint = server_->endpoint();
    o.region = server_->region();
    o.bucket = server_->bucket();
    o.access_key = server_->access_key();
    o.secret_key = server_->secret_key();
    o.path_style = true;
    o.part_size_bytes = 5 * kMiB;
    return o;
  }

  static httplib::Result PlainGet(const std::string& url, const httplib::Headers& headers = {}) {
    const size_t path_at = url.find('/', url.find("://") + 3);
    httplib::Client http(url.substr(0, path_at));
    http.set_url_encode(false);
    return http.Get(url.substr(path_at), headers);
  }

  size_t IncompleteUploads() {
    return client_->ListMultipartUploads("exports/").value().uploads.size();
  }

  static testing::S3Server* server_;
  static std::string* start_error_;
  std::unique_ptr<ExportStorage> storage_;
  std::unique_ptr<s3::S3Client> client_;
};

testing::S3Server* S3ExportStorageTest::server_ = nullptr;
std::string* S3ExportStorageTest::start_error_ = nullptr;

TEST_F(S3ExportStorageTest, PartsGoUpWhileTheWriterStillWrites) {
  const std::string key = MakeObjectKey(1, "csv");
  auto writer = storage_->Create(key).value();
  const std::string chunk(kMiB, 'x');
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(writer->Append(chunk).ok());  // two full parts
  EXPECT_EQ(IncompleteUploads(), 1u);  // the upload started before Commit
  ASSERT_TRUE(writer->Append("end").ok());
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(IncompleteUploads(), 0u);
  EXPECT_EQ(storage_->Open(key).value()->size(), 12 * kMiB + 3);
  std::string tail;
  ASSERT_TRUE(storage_->Open(key).value()->ReadAt(12 * kMiB - 2, 10, &tail).ok());
  EXPECT_EQ(tail, "xxend");
}

// `export-center check`: the credentials list exports/ and may write, proved
// by one marker object that is deleted at once; a wrong secret or a stopped
// server fails with what the store said.
TEST_F(S3ExportStorageTest, CheckListsWritesAndDeletesOneMarkerAndLeavesNothing) {
  auto checked = CheckS3ExportStorage(Options(), http::HttplibClientFactory());
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_NE(checked->find("listed exports/, wrote and deleted one marker object "
                          ".export-center-check/"),
            std::string::npos)
      << *checked;
  EXPECT_TRUE(client_->ListObjects(".export-center-check/").value().objects.empty())
      << "a marker was left behind";

  S3StorageOptions wrong = Options();
  wrong.secret_key = "not-the-secret";
  auto refused = CheckS3ExportStorage(wrong, http::HttplibClientFactory());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("list exports/ of bucket " + server_->bucket()),
            std::string::npos)
      << refused.status().message();

  ASSERT_TRUE(server_->Stop().ok());
  EXPECT_EQ(CheckS3ExportStorage(Options(), http::HttplibClientFactory()).status().code(),
            StatusCode::kUnavailable);
}

TEST_F(S3ExportStorageTest, SmallFileGoesAsOnePutAtCommit) {
  const std::string key = MakeObjectKey(2, "xlsx");
  auto writer = storage_->Create(key).value();
  ASSERT_TRUE(writer->Append(std::string(kMiB, 'y')).ok());
  EXPECT_EQ(IncompleteUploads(), 0u);  // nothing sent yet
  EXPECT_FALSE(storage_->Exists(key).value());
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_TRUE(storage_->Exists(key).value());
}

TEST_F(S3ExportStorageTest, ServerStoppedMidUploadFailsClearlyAndLeavesNoObject) {
  const std::string key = MakeObjectKey(3, "csv");
  auto writer = storage_->Create(key).value();
  const std::string chunk(kMiB, 'z');
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(writer->Append(chunk).ok());  // one part sent
  ASSERT_TRUE(server_->Stop().ok());
  Status failed = Status::Ok();
  for (int i = 0; i < 40 && failed.ok(); ++i) failed = writer->Append(chunk);
  if (failed.ok()) failed = writer->Commit();
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable) << failed.ToString();
  EXPECT_NE(failed.message().find("s3 "), std::string::npos) << failed.ToString();
  EXPECT_NE(failed.message().find(key), std::string::npos) << failed.ToString();
  EXPECT_FALSE(writer->Commit().ok());  // the writer is done
  writer.reset();                       // its abort cannot reach the server either

  ASSERT_TRUE(server_->Restart().ok());
  EXPECT_FALSE(storage_->Exists(key).value());
  EXPECT_TRUE(storage_->List().value().empty());
  // What the abort could not remove is a partial: the reconciler's sweep aborts it.
  auto partials = storage_->ListPartials().value();
  ASSERT_EQ(partials.size(), 1u);
  EXPECT_EQ(partials[0].task_id, 3);
  // Swept as the reconciler does: a pass that fails is repeated on the next
  // one. Right after the restart S3Proxy has once (1 run in 3, on a loaded
  // machine) refused the first abort; each refusal is printed.
  Status swept = storage_->DeletePartial(partials[0]);
  for (int pass = 1; !swept.ok() && pass < 5; ++pass) {
    std::cerr << "sweep pass " << pass << " failed: " << swept.ToString() << "\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    swept = storage_->DeletePartial(partials[0]);
  }
  ASSERT_TRUE(swept.ok()) << swept.ToString();
  EXPECT_EQ(IncompleteUploads(), 0u);
}

TEST_F(S3ExportStorageTest, PresignedDownloadWorksWithRangeAndExpires) {
  S3StorageOptions options = Options();
  options.download = "presigned";
  options.presign_ttl_seconds = 2;
  auto storage = NewS3ExportStorage(options, http::HttplibClientFactory()).value();
  const std::string key = MakeObjectKey(4, "csv");
  auto writer = storage->Create(key).value();
  ASSERT_TRUE(writer->Append("a,b\r\n1,2\r\n").ok());
  ASSERT_TRUE(writer->Commit().ok());
  auto url = storage->PresignedGetUrl(key, {"attachment; filename=\"r.csv\"", "text/csv"});
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  ASSERT_TRUE(url->has_value());
  auto whole = PlainGet(**url);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->status, 200);
  EXPECT_EQ(whole->body, "a,b\r\n1,2\r\n");
  EXPECT_EQ(whole->get_header_value("Content-Disposition"), "attachment; filename=\"r.csv\"");
  EXPECT_EQ(whole->get_header_value("Content-Type"), "text/csv");
  auto part = PlainGet(**url, {{"Range", "bytes=5-7"}});
  ASSERT_TRUE(part);
  EXPECT_EQ(part->status, 206);
  EXPECT_EQ(part->body, "1,2");
  std::this_thread::sleep_for(std::chrono::milliseconds(3100));
  EXPECT_EQ(PlainGet(**url)->status, 403);
}

TEST_F(S3ExportStorageTest, ObjectsAndUploadsThatAreNotOursAreNeverListed) {
  ASSERT_TRUE(client_->PutObject("exports/notes.txt", "not an export").ok());
  ASSERT_TRUE(client_->PutObject("elsewhere/x", "x").ok());
  auto foreign = client_->CreateMultipartUpload("exports/2024/01/01/5/not-a-uuid.csv");
  ASSERT_TRUE(foreign.ok());
  EXPECT_TRUE(storage_->List().value().empty());
  EXPECT_TRUE(storage_->ListPartials().value().empty());
  ASSERT_TRUE(client_->AbortMultipartUpload("exports/2024/01/01/5/not-a-uuid.csv", *foreign).ok());
  ASSERT_TRUE(client_->DeleteObject("exports/notes.txt").ok());
  ASSERT_TRUE(client_->DeleteObject("elsewhere/x").ok());
}

// A store refusing our keys is the store's failure, not the caller's: the seam
// answers Unavailable (the API's 503, an attempt's retry), never a 403.
TEST_F(S3ExportStorageTest, StoreRefusingOurKeysIsUnavailable) {
  S3StorageOptions options = Options();
  options.secret_key = "not-the-secret";
  auto storage = NewS3ExportStorage(options, http::HttplibClientFactory()).value();
  const std::string key = MakeObjectKey(5, "csv");
  auto writer = storage->Create(key).value();
  ASSERT_TRUE(writer->Append("x").ok());
  Status committed = writer->Commit();
  EXPECT_EQ(committed.code(), StatusCode::kUnavailable) << committed.ToString();
  EXPECT_NE(committed.message().find("SignatureDoesNotMatch"), std::string::npos);
  EXPECT_EQ(storage->Open(key).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(storage->List().status().code(), StatusCode::kUnavailable);
}

TEST(NewS3ExportStorage, RejectsUnusableOptions) {
  S3StorageOptions o;
  o.endpoint = "http://127.0.0.1:9";
  o.bucket = "exports";
  o.access_key = "a";
  o.secret_key = "b";
  EXPECT_TRUE(NewS3ExportStorage(o, http::HttplibClientFactory()).ok());  // no request is made
  auto code = [&](auto change) {
    S3StorageOptions c = o;
    change(c);
    return NewS3ExportStorage(c, http::HttplibClientFactory()).status().code();
  };
  EXPECT_EQ(code([](auto& c) { c.part_size_bytes = 5 * kMiB - 1; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](auto& c) { c.download = "magic"; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](auto& c) { c.upload_queue_parts = 0; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](auto& c) { c.endpoint = "s3.example.com"; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](auto& c) { c.access_key.clear(); }), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace export_center::storage
