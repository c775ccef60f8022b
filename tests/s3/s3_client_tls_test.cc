// S3Client over TLS against a real S3-compatible server (S3Proxy on https,
// its certificate signed by a CA scripts/test-s3.sh makes with the openssl
// CLI): the calls go through the outbound HTTP seam, which verifies the
// store's certificate against storage.s3.ca-cert-file; a CA that did not
// sign it, or the system store, is refused with an error that says so.
#include <gtest/gtest.h>

#include "http/httplib/httplib_http_client.h"
#include "s3/s3_client.h"
#include "storage/s3/s3_export_storage.h"
#include "tests/support/s3_server.h"
#include "tests/support/server_process.h"

namespace export_center::s3 {
namespace {

class S3ClientTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    server_ = testing::SharedS3Server(/*tls=*/true, &error);
    if (server_ == nullptr) {
      if (testing::RealServersRequired()) FAIL() << "no S3 server: " << error;
      GTEST_SKIP() << "no S3 server: " << error;
    }
    ASSERT_EQ(server_->endpoint().rfind("https://", 0), 0u) << server_->endpoint();
    ASSERT_FALSE(server_->ca_cert_file().empty());
  }

  static S3ClientOptions Options(const std::string& ca_cert_file) {
    S3ClientOptions o;
    o.endpoint = server_->endpoint();
    o.region = server_->region();
    o.bucket = server_->bucket();
    o.credentials = {server_->access_key(), server_->secret_key()};
    o.path_style = true;
    o.tls.ca_cert_file = ca_cert_file;
    o.http = http::HttplibClientFactory();
    return o;
  }

  static storage::S3StorageOptions StorageOptions(const std::string& ca_cert_file) {
    storage::S3StorageOptions o;
    o.endpoint = server_->endpoint();
    o.region = server_->region();
    o.bucket = server_->bucket();
    o.access_key = server_->access_key();
    o.secret_key = server_->secret_key();
    o.path_style = true;
    o.ca_cert_file = ca_cert_file;
    return o;
  }

  static testing::S3Server* server_;
};

testing::S3Server* S3ClientTlsTest::server_ = nullptr;

TEST_F(S3ClientTlsTest, EveryCallWorksWithTheStoresCa) {
  auto client = S3Client::Create(Options(server_->ca_cert_file())).value();
  const std::string key = "tls/object.bin";
  std::string body(6 * 1024 * 1024 + 3, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 31 % 251);
  // A multipart upload: the lent part comes back unchanged.
  auto upload = client->CreateMultipartUpload(key);
  ASSERT_TRUE(upload.ok()) << upload.status().ToString();
  std::string part = body;
  auto etag = client->UploadPart(key, *upload, 1, &part);
  ASSERT_TRUE(etag.ok()) << etag.status().ToString();
  EXPECT_EQ(part, body);
  ASSERT_TRUE(client->CompleteMultipartUpload(key, *upload, {{1, *etag}}).ok());
  auto info = client->HeadObject(key);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, body.size());
  std::string out;
  ASSERT_TRUE(client->GetObjectRange(key, 5 * 1024 * 1024, 100, &out).ok());
  EXPECT_EQ(out, body.substr(5 * 1024 * 1024, 100));
  auto listed = client->ListObjects("tls/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->objects.size(), 1u);
  ASSERT_TRUE(client->DeleteObject(key).ok());

  // `export-center check`'s proof through the storage, with the setting.
  auto checked = storage::CheckS3ExportStorage(StorageOptions(server_->ca_cert_file()),
                                               http::HttplibClientFactory());
  EXPECT_TRUE(checked.ok()) << checked.status().ToString();
}

TEST_F(S3ClientTlsTest, AnotherCaIsRefusedWithAClearError) {
  auto client = S3Client::Create(Options(server_->other_ca_cert_file())).value();
  Status put = client->PutObject("tls/never", "x");
  EXPECT_EQ(put.code(), StatusCode::kUnavailable) << put.ToString();
  EXPECT_NE(put.message().find("TLS handshake or certificate verification failed"),
            std::string::npos)
      << put.ToString();
  EXPECT_NE(put.message().find(server_->other_ca_cert_file()), std::string::npos) << put.ToString();
  EXPECT_NE(put.message().find(server_->endpoint()), std::string::npos) << put.ToString();

  auto checked = storage::CheckS3ExportStorage(StorageOptions(server_->other_ca_cert_file()),
                                               http::HttplibClientFactory());
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.status().message().find("certificate verification failed"), std::string::npos)
      << checked.status().ToString();
}

TEST_F(S3ClientTlsTest, TheSystemStoreDoesNotKnowAPrivateCa) {
  auto client = S3Client::Create(Options("")).value();
  Status listed = client->ListObjects("tls/").status();
  EXPECT_EQ(listed.code(), StatusCode::kUnavailable) << listed.ToString();
  EXPECT_NE(listed.message().find("the system trust store"), std::string::npos)
      << listed.ToString();
}

}  // namespace
}  // namespace export_center::s3
