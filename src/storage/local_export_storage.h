#pragma once
// LocalExportStorage: export files in a directory tree (docs/storage.md).
//
// The root may be a shared volume (NFS, CephFS) when several instances run;
// nothing here assumes a single process. An object "exports/…/{uuid}.xlsx"
// is the file root/exports/…/{uuid}.xlsx. A writer fills a hidden temp file
// (".{uuid}.xlsx.tmp-{random}") in the same directory, fsyncs it and renames
// it on Commit, so readers never see a partial file. List also removes temp
// files older than 24 hours: those of a crashed process (an export lasts at
// most 30 minutes, so a live writer's file is never that old).

#include <memory>
#include <string>

#include "common/status.h"
#include "storage/export_storage.h"

namespace export_center::storage {

// Creates `root_dir` if missing. InvalidArgument for an empty path,
// Unavailable when the directory cannot be created or is not writable.
StatusOr<std::unique_ptr<ExportStorage>> NewLocalExportStorage(const std::string& root_dir);

// `export-center check`: whether NewLocalExportStorage(root_dir) would succeed
// and its writers could write, without creating or writing anything: the
// root (and its exports/ folder, when present) is a writable folder, or, when
// the root is missing, its nearest existing ancestor is one (serve creates the
// rest). Returns a line saying what was found; Unavailable/InvalidArgument
// naming the path otherwise.
StatusOr<std::string> CheckLocalExportRoot(const std::string& root_dir);

}  // namespace export_center::storage
