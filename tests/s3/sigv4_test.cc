#include "s3/sigv4.h"

#include <gtest/gtest.h>

#include "http/httplib/httplib_http_client.h"
#include "s3/s3_client.h"

namespace export_center::s3 {
namespace {

// AWS's SigV4 test suite (aws-sig-v4-test-suite: service "service", region
// us-east-1, 2015-08-30T12:36:00Z) and the worked examples of the S3 API
// reference (bucket examplebucket, 2013-05-24T00:00:00Z).
const Credentials kSuiteKeys{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};
const SigningScope kSuiteScope{"us-east-1", "service"};
constexpr char kSuiteDate[] = "20150830T123600Z";
const Credentials kS3Keys{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
constexpr char kS3Date[] = "20130524T000000Z";
constexpr int64_t kS3DateSeconds = 1369353600;  // 2013-05-24T00:00:00Z

std::string SignatureOf(const std::string& authorization) {
  return authorization.substr(authorization.find("Signature=") + 10);
}

TEST(SigV4, SuiteGetVanillaQueryOrderKeyCase) {
  SignableRequest r{"GET",
                    "/",
                    {{"Param2", "value2"}, {"Param1", "value1"}},
                    {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", kSuiteDate}},
                    kEmptyPayloadHash};
  EXPECT_EQ(AuthorizationHeader(r, kSuiteKeys, kSuiteScope, kSuiteDate),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST(SigV4, SuiteGetUtf8Path) {
  SignableRequest r{"GET",
                    UriEncode("/\xE1\x88\xB4", true),
                    {},
                    {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", kSuiteDate}},
                    kEmptyPayloadHash};
  EXPECT_EQ(r.path, "/%E1%88%B4");
  EXPECT_EQ(SignatureOf(AuthorizationHeader(r, kSuiteKeys, kSuiteScope, kSuiteDate)),
            "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
}

TEST(SigV4, SuitePostFormWithSignedPayload) {
  const std::string body = "Param1=value1";
  const std::string hash = Sha256Hex(body);
  EXPECT_EQ(hash, "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  SignableRequest r{"POST",
                    "/",
                    {},
                    {{"Content-Type", "application/x-www-form-urlencoded"},
                     {"Host", "example.amazonaws.com"},
                     {"Content-Length", "13"},
                     {"x-amz-content-sha256", hash},
                     {"X-Amz-Date", kSuiteDate}},
                    hash};
  EXPECT_EQ(AuthorizationHeader(r, kSuiteKeys, kSuiteScope, kSuiteDate),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date, "
            "Signature=d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b");
}

TEST(SigV4, S3ReferenceGetObjectWithRange) {
  SignableRequest r{"GET",
                    "/test.txt",
                    {},
                    {{"Host", "examplebucket.s3.amazonaws.com"},
                     {"Range", "bytes=0-9"},
                     {"x-amz-content-sha256", kEmptyPayloadHash},
                     {"x-amz-date", kS3Date}},
                    kEmptyPayloadHash};
  EXPECT_EQ(AuthorizationHeader(r, kS3Keys, SigningScope{}, kS3Date),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4, S3ReferencePresignedUrl) {
  SignableRequest r{"GET", "/test.txt", {}, {{"host", "examplebucket.s3.amazonaws.com"}}, ""};
  EXPECT_EQ(PresignedQuery(r, kS3Keys, SigningScope{}, kS3Date, 86400),
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F"
            "us-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&"
            "X-Amz-SignedHeaders=host&X-Amz-Signature="
            "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

TEST(SigV4, ClientPresignsVirtualHostedUrlsLikeTheReference) {
  S3ClientOptions options;
  options.endpoint = "https://s3.amazonaws.com";
  options.bucket = "examplebucket";
  options.credentials = kS3Keys;
  options.now_seconds = [] { return kS3DateSeconds; };
  options.http = http::HttplibClientFactory();
  auto client = S3Client::Create(options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->PresignGetUrl("test.txt", 86400),
            "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&"
            "X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&"
            "X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&"
            "X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

TEST(SigV4, UriEncodeKeepsUnreservedAndOptionallySlashes) {
  EXPECT_EQ(UriEncode("aZ09-_.~", false), "aZ09-_.~");
  EXPECT_EQ(UriEncode("a b+c/d=e", false), "a%20b%2Bc%2Fd%3De");
  EXPECT_EQ(UriEncode("exports/2024/01/02/1/x.csv.gz", true), "exports/2024/01/02/1/x.csv.gz");
  EXPECT_EQ(UriEncode("attachment; filename*=UTF-8''%E5", false),
            "attachment%3B%20filename%2A%3DUTF-8%27%27%25E5");
}

TEST(SigV4, CanonicalQuerySortsEncodedPairsAndKeepsEmptyValues) {
  EXPECT_EQ(CanonicalQueryString({{"uploads", ""}, {"prefix", "exports/"}}),
            "prefix=exports%2F&uploads=");
  EXPECT_EQ(CanonicalQueryString({{"uploadId", "a b"}, {"partNumber", "10"}}),
            "partNumber=10&uploadId=a%20b");
}

TEST(SigV4, DatesAndTimes) {
  EXPECT_EQ(AmzDate(kS3DateSeconds), kS3Date);
  EXPECT_EQ(ParseS3Time("2013-05-24T00:00:00Z"), kS3DateSeconds * 1000);
  EXPECT_EQ(ParseS3Time("2013-05-24T00:00:00.250Z"), kS3DateSeconds * 1000 + 250);
  EXPECT_EQ(ParseS3Time("Fri, 24 May 2013 00:00:00 GMT"), kS3DateSeconds * 1000);
  EXPECT_EQ(ParseS3Time("yesterday"), 0);
}

TEST(S3Client, RejectsUnusableOptions) {
  S3ClientOptions ok;
  ok.endpoint = "http://127.0.0.1:9000";
  ok.bucket = "exports";
  ok.credentials = {"a", "b"};
  ok.http = http::HttplibClientFactory();
  EXPECT_TRUE(S3Client::Create(ok).ok());
  auto with = [&](auto change) {
    S3ClientOptions o = ok;
    change(o);
    return S3Client::Create(o).status().code();
  };
  EXPECT_EQ(with([](auto& o) { o.http = nullptr; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(with([](auto& o) { o.endpoint = "ftp://x"; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(with([](auto& o) { o.endpoint = "http://x/path"; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(with([](auto& o) { o.bucket = "Bad_Bucket"; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(with([](auto& o) { o.credentials.secret_key.clear(); }), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace export_center::s3
