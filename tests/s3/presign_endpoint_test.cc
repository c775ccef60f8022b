// S3ClientOptions::presign_endpoint: presigned URLs point at, and are signed
// for, the public address of the store while requests go to the internal one.
// No server here (s3_client_test.cc fetches such URLs from a real one).
#include <gtest/gtest.h>

#include <string>

#include "http/httplib/httplib_http_client.h"
#include "s3/s3_client.h"
#include "s3/sigv4.h"

namespace export_center::s3 {
namespace {

// The S3 API reference's presign example (bucket examplebucket,
// 2013-05-24T00:00:00Z, one day), as in sigv4_test.cc.
const Credentials kS3Keys{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
constexpr char kS3Date[] = "20130524T000000Z";
constexpr int64_t kS3DateSeconds = 1369353600;
constexpr char kAwsReferenceUrl[] =
    "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&"
    "X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&"
    "X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&"
    "X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";

S3ClientOptions Options(const std::string& endpoint, const std::string& presign_endpoint,
                        bool path_style) {
  S3ClientOptions o;
  o.endpoint = endpoint;
  o.presign_endpoint = presign_endpoint;
  o.bucket = "examplebucket";
  o.credentials = kS3Keys;
  o.path_style = path_style;
  o.now_seconds = [] { return kS3DateSeconds; };
  o.http = http::HttplibClientFactory();
  return o;
}

std::string Presign(const S3ClientOptions& options, const std::string& key) {
  auto client = S3Client::Create(options);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  if (!client.ok()) return "";
  return (*client)->PresignGetUrl(key, 86400);
}

std::string SignatureOf(const std::string& url) {
  return url.substr(url.find("X-Amz-Signature=") + 16);
}

// What the project's SigV4 signs for a GET of `path` on `host`.
std::string ExpectedQuery(const std::string& host, const std::string& path) {
  SignableRequest r{"GET", path, {}, {{"host", host}}, ""};
  return PresignedQuery(r, kS3Keys, SigningScope{}, kS3Date, 86400);
}

TEST(PresignEndpoint, AnInternalEndpointStillPresignsAwsReferenceUrl) {
  // The client talks to a VPC-internal address; the browser gets AWS's own
  // published URL, byte for byte.
  EXPECT_EQ(Presign(Options("http://10.0.0.5:9000", "https://s3.amazonaws.com", false), "test.txt"),
            kAwsReferenceUrl);
}

TEST(PresignEndpoint, PathStyleUrlHasThePublicSchemeHostPortAndIsSignedForThem) {
  const std::string url = Presign(
      Options("http://minio.internal:9000", "https://files.example.com:8443", true), "a b/r.xlsx");
  const std::string path = "/examplebucket/a%20b/r.xlsx";
  EXPECT_EQ(url, "https://files.example.com:8443" + path + "?" +
                     ExpectedQuery("files.example.com:8443", path));

  // The same key presigned for the internal endpoint: another host, another
  // signature (the host is signed, so rewriting a URL's host cannot work).
  const std::string internal =
      Presign(Options("http://minio.internal:9000", "", true), "a b/r.xlsx");
  EXPECT_EQ(internal,
            "http://minio.internal:9000" + path + "?" + ExpectedQuery("minio.internal:9000", path));
  EXPECT_NE(SignatureOf(url), SignatureOf(internal));
}

TEST(PresignEndpoint, VirtualHostedUrlPrefixesTheBucketToThePublicHost) {
  const std::string url =
      Presign(Options("http://minio.internal:9000", "https://files.example.com", false), "r.csv");
  EXPECT_EQ(url, "https://examplebucket.files.example.com/r.csv?" +
                     ExpectedQuery("examplebucket.files.example.com", "/r.csv"));
}

TEST(PresignEndpoint, ATrailingSlashIsTheSameEndpoint) {
  EXPECT_EQ(
      Presign(Options("http://10.0.0.5:9000", "https://s3.amazonaws.com/", false), "test.txt"),
      kAwsReferenceUrl);
}

TEST(PresignEndpoint, UnsetOrEqualToTheEndpointChangesNothing) {
  const std::string endpoint = "http://127.0.0.1:9000";
  const std::string unset = Presign(Options(endpoint, "", true), "k");
  EXPECT_EQ(unset, Presign(Options(endpoint, endpoint, true), "k"));
  EXPECT_EQ(unset.rfind(endpoint + "/examplebucket/k?", 0), 0u) << unset;
}

TEST(PresignEndpoint, BadValuesAreRefusedNamingTheOption) {
  for (const std::string bad :
       {"ftp://files.example.com", "files.example.com", "https://files.example.com/downloads",
        "https://", "https://a b", "https://files.example.com:port"}) {
    auto client = S3Client::Create(Options("http://127.0.0.1:9000", bad, true));
    ASSERT_FALSE(client.ok()) << bad;
    EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(client.status().message().find("presign endpoint \"" + bad + "\""), std::string::npos)
        << client.status().ToString();
  }
}

}  // namespace
}  // namespace export_center::s3
