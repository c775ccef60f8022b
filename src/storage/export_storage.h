#pragma once
// ExportStorage: where finished files live (docs/storage.md).
//
// Backends: LocalExportStorage (a directory, possibly a shared volume;
// local_export_storage.h) and S3ExportStorage (any S3-compatible object
// store; s3/s3_export_storage.h). Object keys are made by the
// center only (MakeObjectKey) and validated on every call, so no key can
// escape the storage root. All methods are thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/byte_sink.h"
#include "common/status.h"

namespace export_center::storage {

// A file being written. Bytes become visible under the key only on Commit;
// Abort (or destruction without Commit) deletes what was written.
class ObjectWriter : public ByteSink {
 public:
  virtual Status Commit() = 0;
  virtual void Abort() = 0;
};

// A readable stored file.
class ObjectReader {
 public:
  virtual ~ObjectReader() = default;
  virtual uint64_t size() const = 0;
  // Reads up to `length` bytes at `offset` into `out` (replacing its content).
  virtual Status ReadAt(uint64_t offset, uint64_t length, std::string* out) = 0;
};

struct StoredObject {
  std::string key;
  uint64_t size = 0;
  int64_t modified_at_ms = 0;  // file-system time; used only for the 24 h orphan grace
};

// A file an attempt was still writing when it died: never visible under a
// key, left only by a crash (kill -9, power loss). task_id comes from the
// folder the attempt wrote into.
struct PartialObject {
  std::string name;  // backend-specific handle, passed back to DeletePartial
  int64_t task_id = 0;
  int64_t modified_at_ms = 0;    // last write (local) or start of the upload (s3)
  std::optional<uint64_t> size;  // bytes so far, when the backend knows cheaply
};

// What a presigned download answers with, so the browser still saves the file
// under its name and type.
struct DownloadHeaders {
  std::string content_disposition;
  std::string content_type;
};

class ExportStorage {
 public:
  virtual ~ExportStorage() = default;
  virtual StatusOr<std::unique_ptr<ObjectWriter>> Create(const std::string& key) = 0;
  // NotFound when absent.
  virtual StatusOr<std::unique_ptr<ObjectReader>> Open(const std::string& key) = 0;
  // Idempotent: deleting a missing key is OK.
  virtual Status Delete(const std::string& key) = 0;
  virtual StatusOr<bool> Exists(const std::string& key) = 0;
  // Every stored object under "exports/" (orphan sweep, storage gauge).
  virtual StatusOr<std::vector<StoredObject>> List() = 0;

  // Partial files of crashed writers, for the reconciler to delete once their
  // task is no longer RUNNING. Backends without such leftovers keep the defaults.
  virtual StatusOr<std::vector<PartialObject>> ListPartials() {
    return std::vector<PartialObject>{};
  }
  // Idempotent: deleting a partial that is already gone is OK.
  virtual Status DeletePartial(const PartialObject& partial) { return Status::Ok(); }

  // A short-lived URL from which anyone holding it may GET `key` directly
  // (Range included), answering with `headers`; the caller has already
  // authorized the download. nullopt when downloads must stream through the
  // center: always for local storage, and for s3 unless configured
  // `download: presigned`. Makes no request; InvalidArgument for a bad key.
  virtual StatusOr<std::optional<std::string>> PresignedGetUrl(const std::string& key,
                                                               const DownloadHeaders& headers);
};

// "exports/{yyyy/MM/dd}/{taskId}/{uuid}.{ext}" with today's UTC date.
std::string MakeObjectKey(int64_t task_id, const std::string& extension);
// Whether `key` has exactly that shape (no "..", no absolute paths).
bool IsValidObjectKey(const std::string& key);
// The task id a valid object key was made for; nullopt for any other string.
std::optional<int64_t> TaskIdOfObjectKey(const std::string& key);

}  // namespace export_center::storage
