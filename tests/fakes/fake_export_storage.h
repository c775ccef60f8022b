#pragma once
// FakeExportStorage: an in-memory ExportStorage for fast unit tests.
// Objects become visible on Commit, like the real backends. It records the
// largest single read so tests can check that downloads stream in chunks.
// Thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "storage/export_storage.h"

namespace export_center::fakes {

class FakeExportStorage : public storage::ExportStorage {
 public:
  // ---- test controls ----
  void Put(const std::string& key, std::string bytes);
  uint64_t max_read_length() const;
  size_t object_count() const;

  // ---- ExportStorage ----
  StatusOr<std::unique_ptr<storage::ObjectWriter>> Create(const std::string& key) override;
  StatusOr<std::unique_ptr<storage::ObjectReader>> Open(const std::string& key) override;
  Status Delete(const std::string& key) override;
  StatusOr<bool> Exists(const std::string& key) override;
  StatusOr<std::vector<storage::StoredObject>> List() override;

 private:
  friend class FakeObjectWriter;
  friend class FakeObjectReader;
  void NoteRead(uint64_t length);

  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<const std::string>> objects_ GUARDED_BY(mu_);
  uint64_t max_read_length_ GUARDED_BY(mu_) = 0;
};

}  // namespace export_center::fakes
