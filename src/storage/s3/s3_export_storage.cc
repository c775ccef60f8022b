#include "storage/s3/s3_export_storage.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <thread>

#include "common/ids.h"
#include "common/mutex.h"
#include "common/thread_guard.h"
#include "s3/s3_client.h"

namespace export_center::storage {
namespace {

constexpr int64_t kMinPartBytes = 5LL * 1024 * 1024;  // S3's floor for all parts but the last
constexpr int kMaxParts = 10000;                      // S3's ceiling per upload
constexpr uint64_t kReadAheadBytes = 1024 * 1024;     // one ranged GET serves many 64 KiB reads
constexpr char kPrefix[] = "exports/";
// A partial's name is "<key>?uploadId=<id>": readable in `storage list`, and
// all DeletePartial needs.
constexpr char kUploadIdMarker[] = "?uploadId=";

// The client's codes become the seam's (export_storage.h): a missing object
// stays NotFound and a cap LimitExceeded; any other failure of the store —
// down, refusing our keys, answering nonsense — is Unavailable, like an I/O
// error of local storage: an attempt retries it, and the API answers 503
// rather than a 403 that would blame the caller.
Status StorageError(Status s) {
  if (s.ok() || s.code() == StatusCode::kNotFound || s.code() == StatusCode::kLimitExceeded) {
    return s;
  }
  return Unavailable(s.message());
}

template <typename T>
StatusOr<T> StorageError(StatusOr<T> result) {
  if (result.ok()) return result;
  return StorageError(result.status());
}

Status CheckKey(const std::string& key) {
  if (IsValidObjectKey(key)) return Status::Ok();
  return InvalidArgument("storage: invalid object key \"" + key + "\"");
}

// A multipart upload fed from a bounded queue of full parts. The export's
// thread appends and commits; the uploader thread sends parts in order.
class S3ObjectWriter final : public ObjectWriter {
 public:
  // The writer shares the client: its uploader thread may outlive the storage
  // object (a writer abandoned without Commit or Abort still aborts its upload
  // from the destructor, and a leaked one must not touch a freed client).
  S3ObjectWriter(std::shared_ptr<s3::S3Client> client, std::string key, size_t part_size,
                 size_t queue_parts)
      : client_(std::move(client)),
        key_(std::move(key)),
        part_size_(part_size),
        queue_limit_(queue_parts) {}
  ~S3ObjectWriter() override { Abort(); }
  S3ObjectWriter(const S3ObjectWriter&) = delete;
  S3ObjectWriter& operator=(const S3ObjectWriter&) = delete;

  Status Append(std::string_view bytes) override {
    if (state_ != State::kOpen) return Internal("storage: append to a closed object " + key_);
    while (!bytes.empty()) {
      if (buffer_.capacity() < part_size_) TakeBuffer();
      const size_t take = std::min(bytes.size(), part_size_ - buffer_.size());
      buffer_.append(bytes.data(), take);
      bytes.remove_prefix(take);
      if (buffer_.size() == part_size_) {
        if (Status s = SendFullPart(); !s.ok()) return Fail(std::move(s));
      }
    }
    return Status::Ok();
  }

  Status Commit() override {
    if (state_ == State::kCommitted) return Status::Ok();
    if (state_ == State::kAborted) return Internal("storage: commit of an aborted object " + key_);
    if (upload_id_.empty()) {  // smaller than one part: a single PUT
      if (Status s = client_->PutObject(key_, std::move(buffer_)); !s.ok()) return Fail(s);
      state_ = State::kCommitted;
      return Status::Ok();
    }
    if (!buffer_.empty()) {
      if (Status s = Enqueue(std::move(buffer_)); !s.ok()) return Fail(s);
    }
    StatusOr<std::vector<s3::CompletedPart>> parts = DrainUploader();
    if (!parts.ok()) return Fail(parts.status());
    if (Status s = client_->CompleteMultipartUpload(key_, upload_id_, *parts); !s.ok()) {
      return Fail(s);
    }
    state_ = State::kCommitted;
    return Status::Ok();
  }

  void Abort() override {
    if (state_ != State::kOpen) return;
    state_ = State::kAborted;
    StopUploader();
    buffer_ = std::string();
    if (upload_id_.empty()) return;  // nothing was sent
    Status s = client_->AbortMultipartUpload(key_, upload_id_);
    if (s.ok()) {
      spdlog::info("storage: multipart upload of {} aborted", key_);
    } else {
      spdlog::warn(
          "storage: aborting the multipart upload of {} failed ({}); the reconciler's "
          "sweep aborts it later",
          key_, s.ToString());
    }
  }

 private:
  enum class State { kOpen, kCommitted, kAborted };

  Status Fail(Status status) {
    Abort();
    return StorageError(std::move(status));
  }

  // The first full part starts the multipart upload and its uploader thread.
  Status SendFullPart() {
    if (upload_id_.empty()) {
      EC_ASSIGN_OR_RETURN(upload_id_, client_->CreateMultipartUpload(key_));
      uploader_ = StartWorkerThread("s3_uploader", [this] { UploadLoop(); });
    }
    Status s = Enqueue(std::move(buffer_));
    buffer_ = std::string();
    return s;
  }

  // A sent part's buffer if the uploader has one spare, else a new one: at
  // most upload_queue_parts + 2 part buffers are ever allocated, and none
  // is allocated again while the export runs.
  void TakeBuffer() {
    {
      MutexLock lock(&mu_);
      if (!spare_.empty()) {
        buffer_ = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    buffer_.clear();
    buffer_.reserve(part_size_);
  }

  // Blocks while the queue is full: memory stays bounded however fast the
  // export renders. Returns the uploader's error, if it failed.
  Status Enqueue(std::string part) {
    if (next_part_ > kMaxParts) {
      return LimitExceeded("storage: " + key_ + " would need more than " +
                           std::to_string(kMaxParts) + " parts; raise storage.s3.part-size-bytes");
    }
    MutexLock lock(&mu_);
    while (error_.ok() && queue_.size() >= queue_limit_) cv_.Wait(&mu_);
    if (!error_.ok()) return error_;
    queue_.emplace_back(next_part_++, std::move(part));
    cv_.SignalAll();
    return Status::Ok();
  }

  void UploadLoop() {
    while (true) {
      std::pair<int, std::string> part;
      {
        MutexLock lock(&mu_);
        while (!stop_ && !closing_ && queue_.empty()) cv_.Wait(&mu_);
        if (stop_ || queue_.empty()) return;  // aborted, or closing and drained
        part = std::move(queue_.front());
        queue_.pop_front();
        cv_.SignalAll();  // room for the next part
      }
      StatusOr<std::string> etag = RunGuardedOnce("s3_uploader", [&] {
        return client_->UploadPart(key_, upload_id_, part.first, &part.second);
      });
      MutexLock lock(&mu_);
      if (!etag.ok()) {
        error_ = etag.status();
        cv_.SignalAll();
        return;
      }
      done_.push_back(s3::CompletedPart{part.first, *etag});
      spare_.push_back(std::move(part.second));
    }
  }

  // Waits until every queued part is sent; the parts in order, or the error.
  StatusOr<std::vector<s3::CompletedPart>> DrainUploader() {
    {
      MutexLock lock(&mu_);
      closing_ = true;
      cv_.SignalAll();
    }
    if (uploader_.joinable()) uploader_.join();
    MutexLock lock(&mu_);
    if (!error_.ok()) return error_;
    std::vector<s3::CompletedPart> parts = done_;
    std::sort(parts.begin(), parts.end(),
              [](const auto& a, const auto& b) { return a.number < b.number; });
    return parts;
  }

  void StopUploader() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
      queue_.clear();
      spare_.clear();
      cv_.SignalAll();
    }
    // A part in flight finishes (or times out) first, so the abort below
    // cannot race a part that lands after it.
    if (uploader_.joinable()) uploader_.join();
  }

  const std::shared_ptr<s3::S3Client> client_;
  const std::string key_;
  const size_t part_size_;
  const size_t queue_limit_;

  // The export's thread only. upload_id_ is set before the uploader starts
  // and read by it, never changed after.
  State state_ = State::kOpen;
  std::string buffer_;  // the part being filled
  int next_part_ = 1;
  std::string upload_id_;
  std::thread uploader_;

  Mutex mu_;
  CondVar cv_;
  std::deque<std::pair<int, std::string>> queue_ GUARDED_BY(mu_);
  std::vector<s3::CompletedPart> done_ GUARDED_BY(mu_);
  std::vector<std::string> spare_ GUARDED_BY(mu_);  // sent parts' buffers, for reuse
  Status error_ GUARDED_BY(mu_);
  bool closing_ GUARDED_BY(mu_) = false;  // no more parts: drain and exit
  bool stop_ GUARDED_BY(mu_) = false;     // aborted: exit now
};

// Ranged GETs with a read-ahead block: the API's download asks for 64 KiB at
// a time, S3 answers 1 MiB per request. One download's thread at a time.
class S3ObjectReader final : public ObjectReader {
 public:
  S3ObjectReader(std::shared_ptr<s3::S3Client> client, std::string key, uint64_t size)
      : client_(std::move(client)), key_(std::move(key)), size_(size) {}

  uint64_t size() const override { return size_; }

  Status ReadAt(uint64_t offset, uint64_t length, std::string* out) override {
    out->clear();
    if (offset >= size_ || length == 0) return Status::Ok();
    length = std::min(length, size_ - offset);
    if (offset < block_offset_ || offset + length > block_offset_ + block_.size()) {
      const uint64_t fetch = std::min(std::max(length, kReadAheadBytes), size_ - offset);
      EC_RETURN_IF_ERROR(StorageError(client_->GetObjectRange(key_, offset, fetch, &block_)));
      block_offset_ = offset;
    }
    const uint64_t start = offset - block_offset_;
    if (start < block_.size()) {
      out->assign(block_, static_cast<size_t>(start),
                  static_cast<size_t>(std::min<uint64_t>(length, block_.size() - start)));
    }
    return Status::Ok();
  }

 private:
  const std::shared_ptr<s3::S3Client> client_;
  const std::string key_;
  const uint64_t size_;
  std::string block_;
  uint64_t block_offset_ = 0;
};

class S3ExportStorage final : public ExportStorage {
 public:
  S3ExportStorage(std::shared_ptr<s3::S3Client> client, const S3StorageOptions& options)
      : client_(std::move(client)), options_(options) {}

  StatusOr<std::unique_ptr<ObjectWriter>> Create(const std::string& key) override {
    EC_RETURN_IF_ERROR(CheckKey(key));
    return std::unique_ptr<ObjectWriter>(
        new S3ObjectWriter(client_, key, static_cast<size_t>(options_.part_size_bytes),
                           static_cast<size_t>(options_.upload_queue_parts)));
  }

  StatusOr<std::unique_ptr<ObjectReader>> Open(const std::string& key) override {
    EC_RETURN_IF_ERROR(CheckKey(key));
    EC_ASSIGN_OR_RETURN(s3::ObjectInfo info, StorageError(client_->HeadObject(key)));
    return std::unique_ptr<ObjectReader>(new S3ObjectReader(client_, key, info.size));
  }

  Status Delete(const std::string& key) override {
    EC_RETURN_IF_ERROR(CheckKey(key));
    return StorageError(client_->DeleteObject(key));
  }

  StatusOr<bool> Exists(const std::string& key) override {
    EC_RETURN_IF_ERROR(CheckKey(key));
    StatusOr<s3::ObjectInfo> info = client_->HeadObject(key);
    if (info.ok()) return true;
    if (info.status().code() == StatusCode::kNotFound) return false;
    return StorageError(info.status());
  }

  StatusOr<std::vector<StoredObject>> List() override {
    std::vector<StoredObject> out;
    std::string token;
    do {
      EC_ASSIGN_OR_RETURN(s3::ObjectPage page, StorageError(client_->ListObjects(kPrefix, token)));
      for (s3::ObjectInfo& o : page.objects) {
        // Not ours (another tool's object): never listed, never deleted.
        if (!IsValidObjectKey(o.key)) continue;
        out.push_back(StoredObject{std::move(o.key), o.size, o.modified_at_ms});
      }
      token = std::move(page.next_continuation_token);
    } while (!token.empty());
    return out;
  }

  StatusOr<std::vector<PartialObject>> ListPartials() override {
    std::vector<PartialObject> out;
    std::string key_marker, upload_id_marker;
    while (true) {
      EC_ASSIGN_OR_RETURN(s3::UploadPage page, StorageError(client_->ListMultipartUploads(
                                                   kPrefix, key_marker, upload_id_marker)));
      for (const s3::MultipartUpload& u : page.uploads) {
        std::optional<int64_t> task_id = TaskIdOfObjectKey(u.key);
        if (!task_id) continue;
        out.push_back(PartialObject{u.key + kUploadIdMarker + u.upload_id, *task_id,
                                    u.initiated_at_ms, std::nullopt});
      }
      if (!page.truncated || page.next_key_marker.empty()) break;
      key_marker = page.next_key_marker;
      upload_id_marker = page.next_upload_id_marker;
    }
    return out;
  }

  Status DeletePartial(const PartialObject& partial) override {
    const size_t at = partial.name.find(kUploadIdMarker);
    const std::string key = partial.name.substr(0, at);
    if (at == std::string::npos || !IsValidObjectKey(key)) {
      return InvalidArgument("storage: not an incomplete upload: " + partial.name);
    }
    const std::string upload_id = partial.name.substr(at + std::strlen(kUploadIdMarker));
    if (upload_id.empty()) return InvalidArgument("storage: no upload id in " + partial.name);
    return StorageError(client_->AbortMultipartUpload(key, upload_id));
  }

  StatusOr<std::optional<std::string>> PresignedGetUrl(const std::string& key,
                                                       const DownloadHeaders& headers) override {
    EC_RETURN_IF_ERROR(CheckKey(key));
    if (options_.download != "presigned") return std::optional<std::string>();
    std::map<std::string, std::string> overrides;
    if (!headers.content_disposition.empty()) {
      overrides["response-content-disposition"] = headers.content_disposition;
    }
    if (!headers.content_type.empty()) overrides["response-content-type"] = headers.content_type;
    return std::optional<std::string>(
        client_->PresignGetUrl(key, options_.presign_ttl_seconds, overrides));
  }

 private:
  const std::shared_ptr<s3::S3Client> client_;
  const S3StorageOptions options_;
};

// The options' client, after refusing what no S3 store would accept.
StatusOr<std::unique_ptr<s3::S3Client>> ClientFor(const S3StorageOptions& options,
                                                  http::HttpClientFactory* http) {
  if (options.part_size_bytes < kMinPartBytes) {
    return InvalidArgument("storage: s3 part size " + std::to_string(options.part_size_bytes) +
                           " is below S3's minimum of 5 MiB");
  }
  if (options.upload_queue_parts < 1) {
    return InvalidArgument("storage: s3 upload queue must hold at least one part");
  }
  if (options.download != "stream" && options.download != "presigned") {
    return InvalidArgument("storage: s3 download mode \"" + options.download +
                           "\" is not stream or presigned");
  }
  if (options.presign_ttl_seconds < 1 || options.presign_ttl_seconds > 604800) {
    return InvalidArgument("storage: s3 presigned URLs live 1..604800 seconds");
  }
  s3::S3ClientOptions client_options;
  client_options.endpoint = options.endpoint;
  client_options.presign_endpoint = options.presign_endpoint;
  client_options.region = options.region;
  client_options.bucket = options.bucket;
  client_options.credentials = {options.access_key, options.secret_key};
  client_options.path_style = options.path_style;
  client_options.connect_timeout_ms = options.connect_timeout_ms;
  client_options.io_timeout_ms = options.io_timeout_ms;
  client_options.tls.ca_cert_file = options.ca_cert_file;
  client_options.http = http;
  return s3::S3Client::Create(std::move(client_options));
}

}  // namespace

StatusOr<std::unique_ptr<ExportStorage>> NewS3ExportStorage(const S3StorageOptions& options,
                                                            http::HttpClientFactory* http) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<s3::S3Client> client, ClientFor(options, http));
  return std::unique_ptr<ExportStorage>(new S3ExportStorage(std::move(client), options));
}

StatusOr<std::string> CheckS3ExportStorage(const S3StorageOptions& options,
                                           http::HttpClientFactory* http) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<s3::S3Client> client, ClientFor(options, http));
  Status listed = client->ListObjects("exports/", "", 1).status();
  if (!listed.ok()) return listed.WithContext("list exports/ of bucket " + options.bucket);
  // S3 has no read-only way to prove a PUT would be allowed (a policy may
  // grant List but not Put), so one empty marker object outside exports/ is
  // written and deleted at once.
  const std::string marker = ".export-center-check/" + NewUuid();
  Status put = client->PutObject(marker, "");
  if (!put.ok()) return put.WithContext("write marker " + marker + " to bucket " + options.bucket);
  Status deleted = client->DeleteObject(marker);
  if (!deleted.ok()) {
    return deleted.WithContext("delete marker " + marker + " from bucket " + options.bucket);
  }
  return "bucket " + options.bucket + " at " + options.endpoint +
         ": listed exports/, wrote and deleted one marker object " + marker;
}

}  // namespace export_center::storage
