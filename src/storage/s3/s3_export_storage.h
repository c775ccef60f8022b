#pragma once
// S3ExportStorage: export files as objects of an S3-compatible bucket
// (docs/storage.md#s3), through s3::S3Client.
//
// An object key is the S3 key itself. A writer streams a multipart upload: it
// fills one part in memory and hands each full part to its own uploader
// thread through a bounded queue, so rendering and uploading overlap and a
// writer never holds more than (upload_queue_parts + 2) parts; nothing
// touches the local disk. A file smaller than one part goes as one PUT on
// Commit. Commit completes the upload (the object appears whole, at once);
// any failure, Abort, or destruction without Commit aborts it. An upload a
// crash left behind is a PartialObject (ListPartials = incomplete uploads
// under exports/, DeletePartial = AbortMultipartUpload) for the reconciler's
// sweep. Downloads read ranges (ranged GET, read ahead in 1 MiB blocks), or
// are handed out as presigned GET URLs when options.download is "presigned".
// Thread-safe, like every ExportStorage.

#include <memory>

#include "common/status.h"
#include "http/http_client.h"
#include "storage/export_storage.h"
#include "storage/s3/s3_storage_options.h"

namespace export_center::storage {

// InvalidArgument for unusable options (endpoint, presign endpoint, bucket,
// credentials, part size below 5 MiB, download mode). Makes no request: a store that is down
// shows up on first use, as Unavailable (a certificate the CA does not sign: Unavailable
// naming the TLS failure and what it was checked against). Every call goes through `http`
// (the outbound HTTP seam; not owned, outlives the storage).
StatusOr<std::unique_ptr<ExportStorage>> NewS3ExportStorage(const S3StorageOptions& options,
                                                            http::HttpClientFactory* http);

// `export-center check`: proves the bucket is reachable with the credentials
// (lists one key under exports/) and that they may write — S3 has no
// read-only proof of that, so it PUTs and DELETEs one empty marker object
// ".export-center-check/<uuid>", outside exports/. Returns a line saying what
// was done; the client's codes (Unavailable, PermissionDenied, ...) otherwise.
StatusOr<std::string> CheckS3ExportStorage(const S3StorageOptions& options,
                                           http::HttpClientFactory* http);

}  // namespace export_center::storage
