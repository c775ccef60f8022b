#pragma once
// ReadRecordingStorage: an ExportStorage that forwards every call to a real
// one and remembers the largest single ReadAt, so a test can check that a
// download streams the file in chunks instead of reading it whole. It can
// also act as a store that hands out presigned URLs (PresignAs), recording
// the headers it was asked to sign, to test the API's redirect without S3.
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "storage/export_storage.h"

namespace export_center::fakes {

class ReadRecordingStorage final : public storage::ExportStorage {
 public:
  explicit ReadRecordingStorage(std::unique_ptr<storage::ExportStorage> inner)
      : inner_(std::move(inner)) {}

  // The largest `length` any reader handed out by Open was asked for.
  uint64_t max_read_length() const { return max_read_length_; }

  // From now on PresignedGetUrl answers `base + key` (after checking the key
  // like the inner storage); an empty base forwards again.
  void PresignAs(std::string base) {
    MutexLock lock(&mu_);
    presign_base_ = std::move(base);
  }
  // The headers of the last PresignedGetUrl call.
  storage::DownloadHeaders last_presigned_headers() {
    MutexLock lock(&mu_);
    return last_headers_;
  }

  // ---- storage::ExportStorage ----
  StatusOr<std::unique_ptr<storage::ObjectWriter>> Create(const std::string& key) override;
  StatusOr<std::unique_ptr<storage::ObjectReader>> Open(const std::string& key) override;
  Status Delete(const std::string& key) override;
  StatusOr<bool> Exists(const std::string& key) override;
  StatusOr<std::vector<storage::StoredObject>> List() override;
  StatusOr<std::vector<storage::PartialObject>> ListPartials() override;
  Status DeletePartial(const storage::PartialObject& partial) override;
  StatusOr<std::optional<std::string>> PresignedGetUrl(
      const std::string& key, const storage::DownloadHeaders& headers) override;

 private:
  class Reader;

  std::unique_ptr<storage::ExportStorage> inner_;
  std::atomic<uint64_t> max_read_length_{0};
  Mutex mu_;
  std::string presign_base_ GUARDED_BY(mu_);
  storage::DownloadHeaders last_headers_ GUARDED_BY(mu_);
};

}  // namespace export_center::fakes
