#pragma once
// ReadRecordingStorage: an ExportStorage that forwards every call to a real
// one and remembers the largest single ReadAt, so a test can check that a
// download streams the file in chunks instead of reading it whole.
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "storage/export_storage.h"

namespace export_center::fakes {

class ReadRecordingStorage final : public storage::ExportStorage {
 public:
  explicit ReadRecordingStorage(std::unique_ptr<storage::ExportStorage> inner)
      : inner_(std::move(inner)) {}

  // The largest `length` any reader handed out by Open was asked for.
  uint64_t max_read_length() const { return max_read_length_; }

  // ---- storage::ExportStorage ----
  StatusOr<std::unique_ptr<storage::ObjectWriter>> Create(const std::string& key) override;
  StatusOr<std::unique_ptr<storage::ObjectReader>> Open(const std::string& key) override;
  Status Delete(const std::string& key) override;
  StatusOr<bool> Exists(const std::string& key) override;
  StatusOr<std::vector<storage::StoredObject>> List() override;
  StatusOr<std::vector<storage::PartialObject>> ListPartials() override;
  Status DeletePartial(const storage::PartialObject& partial) override;

 private:
  class Reader;

  std::unique_ptr<storage::ExportStorage> inner_;
  std::atomic<uint64_t> max_read_length_{0};
};

}  // namespace export_center::fakes
