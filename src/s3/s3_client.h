#pragma once
// S3Client: the calls of the S3 REST API export-center needs, against any
// S3-compatible object store (AWS S3, MinIO, Ceph RGW, S3Proxy, ...), signed
// with SigV4 (sigv4.h) and sent through the center's one outbound HTTP seam
// (http/http_client.h): its timeouts, its TLS settings (an https endpoint is
// verified against the system store or `tls.ca_cert_file`), no redirects. A
// wire-protocol client: it knows buckets, keys and uploads, nothing of
// exports (storage/s3/ adapts it to the ExportStorage seam).
//
// Errors are mapped in one place (S3Error in s3_client.cc): connection
// failures, 5xx, 429 and SlowDown -> Unavailable; 404 NoSuchKey/NoSuchUpload
// -> NotFound; 403 -> PermissionDenied; other 4xx -> InvalidArgument;
// anything unexpected -> Internal. Messages name the method, key and S3 code.
// Idempotent calls (all but CreateMultipartUpload and
// CompleteMultipartUpload) are retried twice on Unavailable.
//
// Thread-safe: connections are HttpClients of the seam (one keep-alive
// connection each) in a small pool, one per call in flight. A part's body is
// lent to the seam, never copied (ClientRequest::body); an answer's body is
// read whole, capped (a ranged GET: at offset + length, at least 16 MiB).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "http/http_client.h"
#include "s3/sigv4.h"

namespace export_center::s3 {

struct S3ClientOptions {
  std::string endpoint;  // http(s)://host[:port], no path
  // Where presigned URLs point (http(s)://host[:port], no path); empty: the
  // endpoint. Every request the client itself makes still goes to
  // `endpoint`. For a store the client reaches at an internal address
  // (http://minio.internal:9000) that browsers know by a public one
  // (https://files.example.com): SigV4 signs the Host header, so a URL must be
  // signed for the host the browser will send, not rewritten afterwards.
  std::string presign_endpoint;
  std::string region = "us-east-1";
  std::string bucket;
  Credentials credentials;
  // true: http(s)://endpoint/bucket/key (MinIO, S3Proxy, most self-hosted
  // stores); false: http(s)://bucket.endpoint/key (AWS's default).
  bool path_style = false;
  int connect_timeout_ms = 3000;
  int io_timeout_ms = 60000;  // one read or write on the socket
  // How an https endpoint is trusted: verified, against the system store or
  // the PEM bundle `tls.ca_cert_file` (a store behind a private CA).
  http::ClientTlsSettings tls{};
  // The outbound HTTP seam the calls go through; not owned, must outlive the
  // client. Required (app/ passes the process's factory).
  http::HttpClientFactory* http = nullptr;
  // Seconds since the epoch; the signing clock. Injected by tests.
  std::function<int64_t()> now_seconds;
};

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  int64_t modified_at_ms = 0;
};

struct ObjectPage {
  std::vector<ObjectInfo> objects;
  std::string next_continuation_token;  // empty on the last page
};

struct MultipartUpload {
  std::string key;
  std::string upload_id;
  int64_t initiated_at_ms = 0;
};

struct UploadPage {
  std::vector<MultipartUpload> uploads;
  bool truncated = false;
  std::string next_key_marker;
  std::string next_upload_id_marker;
};

struct CompletedPart {
  int number = 0;
  std::string etag;
};

class S3Client {
 public:
  // InvalidArgument for an endpoint or presign endpoint that is not
  // http(s)://host[:port], an empty bucket, missing credentials or no
  // HttpClientFactory.
  static StatusOr<std::unique_ptr<S3Client>> Create(S3ClientOptions options);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const S3ClientOptions& options() const { return options_; }

  // One-request upload (small objects).
  Status PutObject(const std::string& key, std::string body);
  // NotFound when absent.
  StatusOr<ObjectInfo> HeadObject(const std::string& key);
  // Replaces *out with the bytes [offset, offset+length) (fewer at the end;
  // none at or past it). NotFound when absent.
  Status GetObjectRange(const std::string& key, uint64_t offset, uint64_t length, std::string* out);
  // Idempotent: a missing key is OK.
  Status DeleteObject(const std::string& key);
  // One page (up to 1000 keys) under `prefix`, in key order.
  StatusOr<ObjectPage> ListObjects(const std::string& prefix,
                                   const std::string& continuation_token = "", int max_keys = 1000);

  // Multipart upload: Create, UploadPart (numbers 1..10000, each but the
  // last >= 5 MiB on AWS), Complete; or Abort.
  StatusOr<std::string> CreateMultipartUpload(const std::string& key);
  // Returns the part's ETag. `*body` is lent: sent, then given back
  // unchanged, so a writer can reuse its part buffers instead of allocating.
  StatusOr<std::string> UploadPart(const std::string& key, const std::string& upload_id,
                                   int part_number, std::string* body);
  Status CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                 const std::vector<CompletedPart>& parts);
  // Idempotent: an upload that is already gone (NoSuchUpload) is OK.
  Status AbortMultipartUpload(const std::string& key, const std::string& upload_id);
  // One page of the incomplete uploads under `prefix`.
  StatusOr<UploadPage> ListMultipartUploads(const std::string& prefix,
                                            const std::string& key_marker = "",
                                            const std::string& upload_id_marker = "");

  // A URL anyone may GET for `expires_seconds` (1..604800), on the presign
  // endpoint and signed for its host. `response_headers` are S3's response-*
  // overrides (response-content-disposition, response-content-type), signed
  // into the URL. Makes no request.
  std::string PresignGetUrl(const std::string& key, int64_t expires_seconds,
                            const std::map<std::string, std::string>& response_headers = {});

 private:
  class Pool;
  struct Call;
  struct Reply;

  explicit S3Client(S3ClientOptions options);
  std::string ObjectPath(const std::string& key) const;
  std::string BucketPath() const;
  // Sends `call`, retrying an idempotent one on Unavailable; any answer
  // but 2xx becomes a Status. `call.body` is lent to the request and restored.
  StatusOr<Reply> Execute(Call& call);
  StatusOr<Reply> ExecuteOnce(Call& call);

  S3ClientOptions options_;
  std::string host_;  // the Host header: endpoint host[:port], bucket. prefixed unless path-style
  std::string base_url_;          // scheme://host_
  std::string presign_host_;      // the same for the presign endpoint
  std::string presign_base_url_;  // scheme://presign_host_
  std::unique_ptr<Pool> pool_;
};

// Parses "2026-11-30T16:00:07Z" / "2026-11-30T16:00:07.123Z" (S3 XML) and
// "Mon, 30 Nov 2026 16:00:07 GMT" (HTTP headers) to epoch ms; 0 if neither.
int64_t ParseS3Time(std::string_view text);

// ---- reading S3's answers ----------------------------------------------------
// What S3Client makes of an answer's body, apart from the HTTP call so that
// each reader of S3's XML is fuzzed on its own (tests/s3/fuzz/). `what` names
// the call in messages ("LIST exports/").

// The Status of an answer that is not a success: the XML <Error> body's Code
// and Message in the message; 404 NotFound (NoSuchBucket: Internal), 403
// PermissionDenied, 5xx/429/SlowDown Unavailable, other 4xx InvalidArgument.
Status S3Error(const std::string& what, int status, const std::string& body);
// ListObjectsV2. Internal for unreadable XML, no ListBucketResult, or a
// truncated page without a continuation token.
StatusOr<ObjectPage> ParseListObjectsAnswer(const std::string& what, const std::string& body);
// The UploadId of CreateMultipartUpload; Internal when there is none.
StatusOr<std::string> ParseCreateMultipartUploadAnswer(const std::string& what,
                                                       const std::string& body);
// CompleteMultipartUpload's 200 answer, which may still hold an <Error>.
Status ParseCompleteMultipartUploadAnswer(const std::string& what, const std::string& body);
// ListMultipartUploads. Internal for unreadable XML or no ListMultipartUploadsResult.
StatusOr<UploadPage> ParseListMultipartUploadsAnswer(const std::string& what,
                                                     const std::string& body);

}  // namespace export_center::s3
