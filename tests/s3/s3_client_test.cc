// S3Client against a real S3-compatible server (S3Proxy, started by
// tests/support/s3_server.h): every call the storage backend makes.
#include "s3/s3_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "http/httplib/httplib_http_client.h"
#include "tests/support/s3_server.h"
#include "tests/support/server_process.h"

namespace export_center::s3 {
namespace {

constexpr size_t kMiB = 1024 * 1024;

class S3ClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = testing::S3Server::Start();
    if (!server.ok()) {
      start_error_ = new std::string(server.status().ToString());
      return;
    }
    server_ = std::move(server).value().release();
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
    client_ = S3Client::Create(Options()).value();
  }

  static S3ClientOptions Options() {
    S3ClientOptions o;
    o.endpoint = server_->endpoint();
    o.region = server_->region();
    o.bucket = server_->bucket();
    o.credentials = {server_->access_key(), server_->secret_key()};
    o.path_style = true;
    o.http = http::HttplibClientFactory();
    return o;
  }

  // "k-<test name>-<suffix>": keys of one test never meet another's.
  std::string Key(const std::string& suffix) const {
    return std::string("t/") + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
           "/" + suffix;
  }

  static std::string Pattern(size_t n, char seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 31 % 251);
    return s;
  }

  // A plain HTTP GET, no signing: what a browser does with a presigned URL.
  static httplib::Result PlainGet(const std::string& url) {
    const size_t path_at = url.find('/', url.find("://") + 3);
    httplib::Client http(url.substr(0, path_at));
    http.set_url_encode(false);
    return http.Get(url.substr(path_at));
  }

  static testing::S3Server* server_;
  static std::string* start_error_;
  std::unique_ptr<S3Client> client_;
};

testing::S3Server* S3ClientTest::server_ = nullptr;
std::string* S3ClientTest::start_error_ = nullptr;

TEST_F(S3ClientTest, PutHeadRangedGetDelete) {
  const std::string key = Key("a b+ü.txt");  // encoded in the path
  const std::string body = "hello, object store";
  ASSERT_TRUE(client_->PutObject(key, body).ok());
  auto info = client_->HeadObject(key);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, body.size());
  EXPECT_NEAR(static_cast<double>(info->modified_at_ms),
              static_cast<double>(std::time(nullptr)) * 1000, 120000.0);
  std::string out;
  ASSERT_TRUE(client_->GetObjectRange(key, 7, 6, &out).ok());
  EXPECT_EQ(out, "object");
  ASSERT_TRUE(client_->GetObjectRange(key, 14, 100, &out).ok());
  EXPECT_EQ(out, "store");
  ASSERT_TRUE(client_->GetObjectRange(key, body.size(), 10, &out).ok());
  EXPECT_EQ(out, "");
  ASSERT_TRUE(client_->DeleteObject(key).ok());
  ASSERT_TRUE(client_->DeleteObject(key).ok());  // idempotent
  EXPECT_EQ(client_->HeadObject(key).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client_->GetObjectRange(key, 0, 1, &out).code(), StatusCode::kNotFound);
}

TEST_F(S3ClientTest, WrongSecretIsPermissionDenied) {
  S3ClientOptions o = Options();
  o.credentials.secret_key = "not-the-secret";
  auto bad = S3Client::Create(o).value();
  Status s = bad->PutObject(Key("x"), "x");
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("SignatureDoesNotMatch"), std::string::npos) << s.ToString();
}

TEST_F(S3ClientTest, ListingIsPaginated) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client_->PutObject(Key(std::to_string(i)), "x").ok());
  std::vector<std::string> keys;
  std::string token;
  int pages = 0;
  do {
    auto page = client_->ListObjects(Key(""), token, 2);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& o : page->objects) {
      keys.push_back(o.key);
      EXPECT_EQ(o.size, 1u);
      EXPECT_GT(o.modified_at_ms, 0);
    }
    token = page->next_continuation_token;
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(keys.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(keys[i], Key(std::to_string(i)));
}

TEST_F(S3ClientTest, MultipartUploadOfSeveralParts) {
  const std::string key = Key("big.bin");
  auto upload = client_->CreateMultipartUpload(key);
  ASSERT_TRUE(upload.ok()) << upload.status().ToString();
  const std::string p1 = Pattern(5 * kMiB, 'a'), p2 = Pattern(5 * kMiB, 'b'), p3 = "tail";
  std::vector<CompletedPart> parts;
  int n = 0;
  for (const std::string* p : {&p1, &p2, &p3}) {
    std::string body = *p;
    auto etag = client_->UploadPart(key, *upload, ++n, &body);
    EXPECT_EQ(body, *p);  // lent and given back
    ASSERT_TRUE(etag.ok()) << etag.status().ToString();
    parts.push_back({n, *etag});
  }
  // Not visible before Complete, but listed as an incomplete upload.
  EXPECT_EQ(client_->HeadObject(key).status().code(), StatusCode::kNotFound);
  auto uploads = client_->ListMultipartUploads(Key(""));
  ASSERT_TRUE(uploads.ok()) << uploads.status().ToString();
  ASSERT_EQ(uploads->uploads.size(), 1u);
  EXPECT_EQ(uploads->uploads[0].key, key);
  EXPECT_EQ(uploads->uploads[0].upload_id, *upload);
  EXPECT_NEAR(static_cast<double>(uploads->uploads[0].initiated_at_ms),
              static_cast<double>(std::time(nullptr)) * 1000, 120000.0);

  ASSERT_TRUE(client_->CompleteMultipartUpload(key, *upload, parts).ok());
  EXPECT_EQ(client_->HeadObject(key).value().size, p1.size() + p2.size() + p3.size());
  std::string out;
  ASSERT_TRUE(client_->GetObjectRange(key, 5 * kMiB - 3, 6, &out).ok());
  EXPECT_EQ(out, p1.substr(5 * kMiB - 3) + p2.substr(0, 3));
  ASSERT_TRUE(client_->GetObjectRange(key, 10 * kMiB, 100, &out).ok());
  EXPECT_EQ(out, "tail");
  EXPECT_TRUE(client_->ListMultipartUploads(Key("")).value().uploads.empty());
}

TEST_F(S3ClientTest, AbortLeavesNothingAndIsIdempotent) {
  const std::string key = Key("aborted.bin");
  auto upload = client_->CreateMultipartUpload(key);
  ASSERT_TRUE(upload.ok());
  std::string part = Pattern(5 * kMiB, 'z');
  ASSERT_TRUE(client_->UploadPart(key, *upload, 1, &part).ok());
  ASSERT_TRUE(client_->AbortMultipartUpload(key, *upload).ok());
  ASSERT_TRUE(client_->AbortMultipartUpload(key, *upload).ok());  // already gone: OK
  EXPECT_TRUE(client_->ListMultipartUploads(Key("")).value().uploads.empty());
  EXPECT_EQ(client_->HeadObject(key).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(client_->ListObjects(Key("")).value().objects.empty());
}

TEST_F(S3ClientTest, PresignedUrlWorksForAPlainClientAndExpires) {
  const std::string key = Key("report.xlsx");
  ASSERT_TRUE(client_->PutObject(key, "0123456789").ok());
  const std::string disposition = "attachment; filename*=UTF-8''%E5%AE%A2.xlsx";
  const std::string url = client_->PresignGetUrl(
      key, 2, {{"response-content-disposition", disposition}, {"response-content-type", "x/y"}});
  auto res = PlainGet(url);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->body, "0123456789");
  // S3 decodes the override once; S3Proxy decodes it twice, so compare the
  // decoded forms: either way the browser gets the same file name.
  EXPECT_EQ(httplib::detail::decode_url(res->get_header_value("Content-Disposition"), false),
            httplib::detail::decode_url(disposition, false));
  EXPECT_EQ(res->get_header_value("Content-Type"), "x/y");

  // A tampered URL is refused.
  std::string tampered = url;
  tampered.replace(tampered.find("X-Amz-Expires=2"), 15, "X-Amz-Expires=9");
  EXPECT_EQ(PlainGet(tampered)->status, 403);

  std::this_thread::sleep_for(std::chrono::milliseconds(3100));
  auto expired = PlainGet(url);
  ASSERT_TRUE(expired);
  EXPECT_EQ(expired->status, 403) << expired->body;
}

// The server listens on 127.0.0.1:P; "localhost:P" is the same server under
// another Host, as a public name is for a store the center reaches inside.
TEST_F(S3ClientTest, PresignedUrlIsSignedForThePresignEndpointsHost) {
  const std::string key = Key("public.csv");
  ASSERT_TRUE(client_->PutObject(key, "a,b\n1,2\n").ok());
  const std::string internal = server_->endpoint();  // http://127.0.0.1:P
  ASSERT_EQ(internal.rfind("http://127.0.0.1:", 0), 0u) << internal;
  const std::string public_endpoint = "http://localhost:" + internal.substr(17);
  S3ClientOptions o = Options();
  o.presign_endpoint = public_endpoint;
  auto presigning = S3Client::Create(o).value();
  ASSERT_TRUE(presigning->HeadObject(key).ok());

  const std::string url = presigning->PresignGetUrl(key, 60);
  EXPECT_EQ(url.rfind(public_endpoint + "/", 0), 0u) << url;
  auto res = PlainGet(url);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->body, "a,b\n1,2\n");

  // A URL signed for 127.0.0.1 works there, and is refused once its host is
  // rewritten to localhost: the server checks the signed Host.
  const std::string for_internal = client_->PresignGetUrl(key, 60);
  EXPECT_EQ(PlainGet(for_internal)->status, 200);
  const std::string rewritten = public_endpoint + for_internal.substr(internal.size());
  auto refused = PlainGet(rewritten);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403) << refused->body;
  EXPECT_NE(refused->body.find("SignatureDoesNotMatch"), std::string::npos) << refused->body;
  // And the other way round.
  EXPECT_EQ(PlainGet(internal + url.substr(public_endpoint.size()))->status, 403);
}

TEST_F(S3ClientTest, OnlyPresignedUrlsGoToThePresignEndpoint) {
  S3ClientOptions o = Options();
  // Nothing listens there: every request the client makes must go to the endpoint.
  o.presign_endpoint = "http://127.0.0.1:" + std::to_string(testing::FreeLoopbackPort().value());
  auto client = S3Client::Create(o).value();
  const std::string key = Key("x.bin");
  ASSERT_TRUE(client->PutObject(key, "xyz").ok());
  EXPECT_EQ(client->HeadObject(key).value().size, 3u);
  std::string out;
  ASSERT_TRUE(client->GetObjectRange(key, 1, 2, &out).ok());
  EXPECT_EQ(out, "yz");
  EXPECT_EQ(client->ListObjects(Key("")).value().objects.size(), 1u);
  ASSERT_TRUE(client->DeleteObject(key).ok());
  EXPECT_EQ(client->PresignGetUrl(key, 60).rfind(o.presign_endpoint + "/", 0), 0u);
}

TEST_F(S3ClientTest, ServerDownIsUnavailableAndRetried) {
  S3ClientOptions o = Options();
  o.endpoint = "http://127.0.0.1:" + std::to_string(testing::FreeLoopbackPort().value());
  auto nowhere = S3Client::Create(o).value();
  const auto started = std::chrono::steady_clock::now();
  auto info = nowhere->HeadObject("x");
  EXPECT_EQ(info.status().code(), StatusCode::kUnavailable) << info.status().ToString();
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(900));
  // Not idempotent: one attempt only.
  EXPECT_EQ(nowhere->CreateMultipartUpload("x").status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace export_center::s3
