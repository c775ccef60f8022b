#pragma once
// The options of the S3 export storage (s3_export_storage.h), beside it so
// that config/, which fills them, needs no storage code. Plain data: standard
// headers only (scripts/check-deps.py).

#include <cstdint>
#include <string>

namespace export_center::storage {

// storage.kind: s3 (docs/storage.md#s3). Credentials come from the file or,
// winning, from EXPORT_CENTER_S3_ACCESS_KEY / EXPORT_CENTER_S3_SECRET_KEY.
struct S3StorageOptions {
  std::string endpoint;  // http(s)://host[:port]
  std::string region = "us-east-1";
  std::string bucket;
  std::string access_key;
  std::string secret_key;
  bool path_style = false;  // endpoint/bucket/key instead of bucket.endpoint/key
  // Where presigned download URLs point, signed for its host; empty: endpoint.
  // The center's own requests always go to `endpoint` (docs/storage.md#downloads).
  std::string presign_endpoint;
  // Bytes per multipart part (S3 wants >= 5 MiB but for the last part), and
  // how many full parts may wait for the uploader: a writer holds at most
  // (upload_queue_parts + 2) parts in memory.
  int64_t part_size_bytes = 8LL * 1024 * 1024;
  int upload_queue_parts = 1;
  // "stream": downloads pass through the center; "presigned": the API answers
  // 302 to a presigned GET valid presign_ttl_seconds.
  std::string download = "stream";
  int presign_ttl_seconds = 60;
  int connect_timeout_ms = 3000;
  int io_timeout_ms = 60000;
  // A PEM bundle that verifies an https endpoint's certificate instead of the
  // system trust store (a store behind a private CA); empty: the system store.
  // The certificate and its host name are always verified.
  std::string ca_cert_file;
};

}  // namespace export_center::storage
