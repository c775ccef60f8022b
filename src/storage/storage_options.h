#pragma once
// Which ExportStorage backend keeps the files, and each backend's options
// (beside its backend: s3/s3_storage_options.h). config/ fills it, app/
// opens the matching backend. Plain data: standard headers and other
// options headers only (scripts/check-deps.py).

#include <string>

#include "storage/s3/s3_storage_options.h"

namespace export_center::storage {

// Which backend keeps the files and where (app/ opens the matching one).
struct StorageOptions {
  std::string kind = "local";
  std::string root = "var/files";  // kind local
  S3StorageOptions s3;             // kind s3
};

}  // namespace export_center::storage
