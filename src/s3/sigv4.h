#pragma once
// AWS Signature Version 4 for S3 requests: the Authorization header of a
// request and the query string of a presigned URL (docs/storage.md#s3).
//
// Hand-written over OpenSSL's SHA-256 and HMAC because no maintained C or C++
// S3/AWS SDK is packaged by Debian (libs3 2.0 there signs with V2 only and has
// no multipart upload), and SigV4 is a few string rules plus four HMACs.
// Checked against AWS's published test vectors (tests/s3/sigv4_test.cc).
// Pure functions: thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/digest.h"  // Sha256Hex: a payload's hash

namespace export_center::s3 {

struct Credentials {
  std::string access_key;
  std::string secret_key;
};

// Where a signature is valid: the region and service of the credential scope.
struct SigningScope {
  std::string region = "us-east-1";
  std::string service = "s3";
};

// What is signed. `path` is the canonical URI: already percent-encoded once
// (UriEncode(key, false) for S3 keys). `query` holds raw, not yet encoded,
// names and values. `headers` are the headers to sign; names in any case
// (they are lower-cased), and must include "host". `payload_hash` is the hex
// SHA-256 of the body or "UNSIGNED-PAYLOAD".
struct SignableRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> query;
  std::map<std::string, std::string> headers;
  std::string payload_hash;
};

// The hex SHA-256 of an empty payload.
inline constexpr char kEmptyPayloadHash[] =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters
// (A-Z a-z 0-9 - _ . ~) stay, everything else becomes %XX (upper-case hex);
// '/' stays when `keep_slash` (object keys in paths).
std::string UriEncode(std::string_view text, bool keep_slash);

// "20130524T000000Z" for a Unix time in seconds (UTC).
std::string AmzDate(int64_t unix_seconds);

// The query string as signed and sent: names and values encoded, pairs
// sorted ("partNumber=1&uploadId=abc", "uploads=").
std::string CanonicalQueryString(const std::multimap<std::string, std::string>& query);

// The canonical request and the string to sign, exposed for tests and logs.
std::string CanonicalRequest(const SignableRequest& request);
std::string StringToSign(const SignableRequest& request, const SigningScope& scope,
                         const std::string& amz_date);

// The value of the Authorization header for `request` signed at `amz_date`
// (which must also be the request's x-amz-date header).
std::string AuthorizationHeader(const SignableRequest& request, const Credentials& credentials,
                                const SigningScope& scope, const std::string& amz_date);

// The query string of a presigned URL ("X-Amz-Algorithm=...&X-Amz-Signature=..."),
// valid `expires_seconds` from `amz_date`. `request.query` may hold extra
// parameters (e.g. response-content-disposition); they are signed and
// included, encoded. Only the host header is signed; the payload is UNSIGNED.
std::string PresignedQuery(const SignableRequest& request, const Credentials& credentials,
                           const SigningScope& scope, const std::string& amz_date,
                           int64_t expires_seconds);

}  // namespace export_center::s3
