#include "tests/fakes/fake_export_storage.h"

#include <algorithm>

namespace export_center::fakes {

class FakeObjectWriter : public storage::ObjectWriter {
 public:
  FakeObjectWriter(FakeExportStorage* owner, std::string key)
      : owner_(owner), key_(std::move(key)) {}
  Status Append(std::string_view bytes) override {
    buffer_.append(bytes);
    return Status::Ok();
  }
  Status Commit() override {
    owner_->Put(key_, std::move(buffer_));
    return Status::Ok();
  }
  void Abort() override { buffer_.clear(); }

 private:
  FakeExportStorage* owner_;
  std::string key_;
  std::string buffer_;
};

class FakeObjectReader : public storage::ObjectReader {
 public:
  FakeObjectReader(FakeExportStorage* owner, std::shared_ptr<const std::string> data)
      : owner_(owner), data_(std::move(data)) {}
  uint64_t size() const override { return data_->size(); }
  Status ReadAt(uint64_t offset, uint64_t length, std::string* out) override {
    owner_->NoteRead(length);
    if (offset > data_->size()) return InvalidArgument("read past the end");
    *out = data_->substr(offset, length);
    return Status::Ok();
  }

 private:
  FakeExportStorage* owner_;
  std::shared_ptr<const std::string> data_;
};

void FakeExportStorage::Put(const std::string& key, std::string bytes) {
  MutexLock lock(&mu_);
  objects_[key] = std::make_shared<const std::string>(std::move(bytes));
}

uint64_t FakeExportStorage::max_read_length() const {
  MutexLock lock(&mu_);
  return max_read_length_;
}

size_t FakeExportStorage::object_count() const {
  MutexLock lock(&mu_);
  return objects_.size();
}

void FakeExportStorage::NoteRead(uint64_t length) {
  MutexLock lock(&mu_);
  max_read_length_ = std::max(max_read_length_, length);
}

StatusOr<std::unique_ptr<storage::ObjectWriter>> FakeExportStorage::Create(const std::string& key) {
  return std::unique_ptr<storage::ObjectWriter>(new FakeObjectWriter(this, key));
}

StatusOr<std::unique_ptr<storage::ObjectReader>> FakeExportStorage::Open(const std::string& key) {
  MutexLock lock(&mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return NotFound("no object " + key);
  return std::unique_ptr<storage::ObjectReader>(new FakeObjectReader(this, it->second));
}

Status FakeExportStorage::Delete(const std::string& key) {
  MutexLock lock(&mu_);
  objects_.erase(key);
  return Status::Ok();
}

StatusOr<bool> FakeExportStorage::Exists(const std::string& key) {
  MutexLock lock(&mu_);
  return objects_.count(key) > 0;
}

StatusOr<std::vector<storage::StoredObject>> FakeExportStorage::List() {
  MutexLock lock(&mu_);
  std::vector<storage::StoredObject> out;
  for (const auto& [key, data] : objects_) out.push_back({key, data->size(), 0});
  return out;
}

}  // namespace export_center::fakes
