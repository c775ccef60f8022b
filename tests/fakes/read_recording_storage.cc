#include "tests/fakes/read_recording_storage.h"

namespace export_center::fakes {

class ReadRecordingStorage::Reader final : public storage::ObjectReader {
 public:
  Reader(std::unique_ptr<storage::ObjectReader> inner, std::atomic<uint64_t>* max_read_length)
      : inner_(std::move(inner)), max_read_length_(max_read_length) {}

  uint64_t size() const override { return inner_->size(); }

  Status ReadAt(uint64_t offset, uint64_t length, std::string* out) override {
    uint64_t seen = max_read_length_->load();
    while (length > seen && !max_read_length_->compare_exchange_weak(seen, length)) {
    }
    return inner_->ReadAt(offset, length, out);
  }

 private:
  std::unique_ptr<storage::ObjectReader> inner_;
  std::atomic<uint64_t>* max_read_length_;
};

StatusOr<std::unique_ptr<storage::ObjectWriter>> ReadRecordingStorage::Create(
    const std::string& key) {
  return inner_->Create(key);
}

StatusOr<std::unique_ptr<storage::ObjectReader>> ReadRecordingStorage::Open(
    const std::string& key) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<storage::ObjectReader> reader, inner_->Open(key));
  return std::unique_ptr<storage::ObjectReader>(new Reader(std::move(reader), &max_read_length_));
}

Status ReadRecordingStorage::Delete(const std::string& key) { return inner_->Delete(key); }

StatusOr<bool> ReadRecordingStorage::Exists(const std::string& key) { return inner_->Exists(key); }

StatusOr<std::vector<storage::StoredObject>> ReadRecordingStorage::List() { return inner_->List(); }

StatusOr<std::vector<storage::PartialObject>> ReadRecordingStorage::ListPartials() {
  return inner_->ListPartials();
}

Status ReadRecordingStorage::DeletePartial(const storage::PartialObject& partial) {
  return inner_->DeletePartial(partial);
}

StatusOr<std::optional<std::string>> ReadRecordingStorage::PresignedGetUrl(
    const std::string& key, const storage::DownloadHeaders& headers) {
  EC_ASSIGN_OR_RETURN(std::optional<std::string> inner, inner_->PresignedGetUrl(key, headers));
  MutexLock lock(&mu_);
  last_headers_ = headers;
  if (presign_base_.empty()) return inner;
  return std::optional<std::string>(presign_base_ + key);
}

}  // namespace export_center::fakes
