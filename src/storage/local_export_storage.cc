#include "storage/local_export_storage.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string_view>

#include "common/ids.h"

namespace export_center::storage {
namespace {

// A crashed writer's temp file is this old before List removes it; an export
// runs at most 30 minutes, so no live writer is ever affected.
constexpr int64_t kStaleTempMs = 24LL * 3600 * 1000;
constexpr std::string_view kTempMarker = ".tmp-";

// errno -> Status, in one place (like leveldb's PosixError).
Status PosixError(const std::string& context, int err) {
  std::string message = context + ": " + std::strerror(err);
  if (err == ENOENT) return NotFound(std::move(message));
  return Unavailable(std::move(message));
}

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }
std::string Base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

int64_t MtimeMs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

int64_t NowMs() { return static_cast<int64_t>(std::time(nullptr)) * 1000; }

// mkdir -p for the directories below the root; concurrent creators are fine.
Status MakeDirs(const std::string& root, const std::string& dir) {
  for (size_t pos = root.size() + 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return PosixError("mkdir " + part, errno);
    }
  }
  return Status::Ok();
}

// Makes a rename durable: the new directory entry reaches the disk.
void SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

class LocalObjectWriter final : public ObjectWriter {
 public:
  LocalObjectWriter(int fd, std::string temp_path, std::string final_path)
      : fd_(fd), temp_path_(std::move(temp_path)), final_path_(std::move(final_path)) {}
  ~LocalObjectWriter() override { Abort(); }
  LocalObjectWriter(const LocalObjectWriter&) = delete;
  LocalObjectWriter& operator=(const LocalObjectWriter&) = delete;

  Status Append(std::string_view bytes) override {
    if (fd_ < 0) return Internal("storage: append to a closed object " + final_path_);
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return PosixError("write " + temp_path_, errno);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }

  Status Commit() override {
    if (committed_) return Status::Ok();
    if (fd_ < 0) return Internal("storage: commit of an aborted object " + final_path_);
    // fsync before rename: after a crash the key holds the whole file or nothing.
    if (::fsync(fd_) != 0) return Fail(PosixError("fsync " + temp_path_, errno));
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Fail(PosixError("close " + temp_path_, errno));
    if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
      return Fail(PosixError("rename " + temp_path_, errno));
    }
    committed_ = true;
    SyncDir(Parent(final_path_));
    return Status::Ok();
  }

  void Abort() override {
    if (committed_) return;
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    if (!temp_path_.empty()) {
      ::unlink(temp_path_.c_str());
      temp_path_.clear();
    }
  }

 private:
  Status Fail(Status status) {
    Abort();
    return status;
  }

  int fd_;
  std::string temp_path_;
  std::string final_path_;
  bool committed_ = false;
};

class LocalObjectReader final : public ObjectReader {
 public:
  LocalObjectReader(int fd, uint64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  ~LocalObjectReader() override { ::close(fd_); }
  LocalObjectReader(const LocalObjectReader&) = delete;
  LocalObjectReader& operator=(const LocalObjectReader&) = delete;

  uint64_t size() const override { return size_; }

  Status ReadAt(uint64_t offset, uint64_t length, std::string* out) override {
    out->clear();
    if (offset >= size_) return Status::Ok();
    out->resize(static_cast<size_t>(std::min(length, size_ - offset)));
    size_t done = 0;
    while (done < out->size()) {
      const ssize_t n =
          ::pread(fd_, out->data() + done, out->size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return PosixError("read " + path_, errno);
      if (n == 0) break;  // the file shrank under us: return what there is
      done += static_cast<size_t>(n);
    }
    out->resize(done);
    return Status::Ok();
  }

 private:
  int fd_;
  uint64_t size_;
  std::string path_;
};

class LocalExportStorage final : public ExportStorage {
 public:
  explicit LocalExportStorage(std::string root) : root_(std::move(root)) {}

  StatusOr<std::unique_ptr<ObjectWriter>> Create(const std::string& key) override;
  StatusOr<std::unique_ptr<ObjectReader>> Open(const std::string& key) override;
  Status Delete(const std::string& key) override;
  StatusOr<bool> Exists(const std::string& key) override;
  StatusOr<std::vector<StoredObject>> List() override;
  StatusOr<std::vector<PartialObject>> ListPartials() override;
  Status DeletePartial(const PartialObject& partial) override;

 private:
  struct Listing {
    std::vector<StoredObject> objects;
    std::vector<PartialObject> partials;
  };
  Status CheckKey(const std::string& key) const {
    if (IsValidObjectKey(key)) return Status::Ok();
    return InvalidArgument("storage: invalid object key \"" + key + "\"");
  }
  std::string PathOf(const std::string& key) const { return root_ + "/" + key; }
  Status Walk(const std::string& dir, Listing* out) const;
  void VisitFile(const std::string& path, const struct stat& st, Listing* out) const;
  std::optional<PartialObject> AsPartial(const std::string& path, const struct stat& st) const;

  const std::string root_;
};

StatusOr<std::unique_ptr<ObjectWriter>> LocalExportStorage::Create(const std::string& key) {
  EC_RETURN_IF_ERROR(CheckKey(key));
  const std::string path = PathOf(key);
  const std::string dir = Parent(path);
  const std::string temp = dir + "/." + Base(path) + std::string(kTempMarker) + NewUuid();
  // Delete removes an emptied task directory; if that races with us, make it
  // again and retry.
  for (int attempt = 0;; ++attempt) {
    EC_RETURN_IF_ERROR(MakeDirs(root_, dir));
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return std::unique_ptr<ObjectWriter>(new LocalObjectWriter(fd, temp, path));
    if (errno != ENOENT || attempt == 2) {
      // Even a missing directory is transient here: nothing the caller did.
      return Unavailable("storage: create " + temp + ": " + std::strerror(errno));
    }
  }
}

StatusOr<std::unique_ptr<ObjectReader>> LocalExportStorage::Open(const std::string& key) {
  EC_RETURN_IF_ERROR(CheckKey(key));
  const std::string path = PathOf(key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PosixError("storage: open " + key, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return PosixError("storage: stat " + key, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return NotFound("storage: " + key + " is not a file");
  }
  return std::unique_ptr<ObjectReader>(
      new LocalObjectReader(fd, static_cast<uint64_t>(st.st_size), path));
}

Status LocalExportStorage::Delete(const std::string& key) {
  EC_RETURN_IF_ERROR(CheckKey(key));
  const std::string path = PathOf(key);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return PosixError("storage: delete " + key, errno);
  }
  // One directory per task: drop it once empty so they do not pile up over
  // the retention period. Fails harmlessly (ENOTEMPTY) when it is not.
  ::rmdir(Parent(path).c_str());
  return Status::Ok();
}

StatusOr<bool> LocalExportStorage::Exists(const std::string& key) {
  EC_RETURN_IF_ERROR(CheckKey(key));
  struct stat st;
  if (::stat(PathOf(key).c_str(), &st) == 0) return S_ISREG(st.st_mode);
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return PosixError("storage: stat " + key, errno);
}

StatusOr<std::vector<StoredObject>> LocalExportStorage::List() {
  Listing out;
  EC_RETURN_IF_ERROR(Walk(root_ + "/exports", &out));
  return std::move(out.objects);
}

StatusOr<std::vector<PartialObject>> LocalExportStorage::ListPartials() {
  Listing out;
  EC_RETURN_IF_ERROR(Walk(root_ + "/exports", &out));
  return std::move(out.partials);
}

Status LocalExportStorage::DeletePartial(const PartialObject& partial) {
  // Only a temp name inside our exports tree may be deleted this way.
  const std::string prefix = root_ + "/exports/";
  const std::string name = Base(partial.name);
  if (partial.name.compare(0, prefix.size(), prefix) != 0 ||
      partial.name.find("/../") != std::string::npos || name.empty() || name[0] != '.' ||
      name.find(kTempMarker) == std::string::npos) {
    return InvalidArgument("storage: not a partial file: " + partial.name);
  }
  if (::unlink(partial.name.c_str()) != 0 && errno != ENOENT) {
    return PosixError("storage: delete partial " + partial.name, errno);
  }
  ::rmdir(Parent(partial.name).c_str());
  return Status::Ok();
}

// A temp file sits in exports/yyyy/MM/dd/{taskId}/; the folder names its task.
std::optional<PartialObject> LocalExportStorage::AsPartial(const std::string& path,
                                                           const struct stat& st) const {
  const std::string folder = Base(Parent(path));
  auto task_id = ParseId(folder);
  if (!task_id) return std::nullopt;
  return PartialObject{path, *task_id, MtimeMs(st), static_cast<uint64_t>(st.st_size)};
}

// Depth-first over the tree; entries that vanish mid-walk (a concurrent
// Delete) are skipped, symbolic links are not followed.
Status LocalExportStorage::Walk(const std::string& dir, Listing* out) const {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::Ok();
    return PosixError("storage: list " + dir, errno);
  }
  Status status;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + std::string(name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      status = Walk(path, out);
      if (!status.ok()) break;
    } else if (S_ISREG(st.st_mode)) {
      VisitFile(path, st, out);
    }
  }
  ::closedir(d);
  return status;
}

void LocalExportStorage::VisitFile(const std::string& path, const struct stat& st,
                                   Listing* out) const {
  const std::string name = Base(path);
  if (!name.empty() && name[0] == '.' && name.find(kTempMarker) != std::string::npos) {
    if (NowMs() - MtimeMs(st) > kStaleTempMs) {
      ::unlink(path.c_str());
    } else if (auto partial = AsPartial(path, st)) {
      out->partials.push_back(std::move(*partial));
    }
    return;
  }
  std::string key = path.substr(root_.size() + 1);
  if (!IsValidObjectKey(key)) return;  // not ours: never listed, never deleted
  out->objects.push_back(
      StoredObject{std::move(key), static_cast<uint64_t>(st.st_size), MtimeMs(st)});
}

}  // namespace

StatusOr<std::unique_ptr<ExportStorage>> NewLocalExportStorage(const std::string& root_dir) {
  if (root_dir.empty()) return InvalidArgument("storage: empty root directory");
  std::error_code ec;
  std::filesystem::path root = std::filesystem::absolute(root_dir, ec).lexically_normal();
  if (ec) return Unavailable("storage: bad root " + root_dir + ": " + ec.message());
  std::string text = root.string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  std::filesystem::create_directories(text, ec);
  if (ec) return Unavailable("storage: cannot create " + text + ": " + ec.message());
  if (::access(text.c_str(), W_OK | X_OK) != 0) {
    return Unavailable("storage: root " + text + ": " + std::strerror(errno));
  }
  return std::unique_ptr<ExportStorage>(new LocalExportStorage(text));
}

namespace {

// A folder this process may create entries in; access() also sees a
// read-only mount (EROFS), which the mode bits do not show.
Status CheckWritableFolder(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    return Unavailable("storage: " + path.string() + " is not a folder");
  }
  if (::access(path.c_str(), W_OK | X_OK) != 0) {
    return Unavailable("storage: " + path.string() + " is not writable: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> CheckLocalExportRoot(const std::string& root_dir) {
  if (root_dir.empty()) return InvalidArgument("storage: empty root directory");
  std::error_code ec;
  std::filesystem::path root = std::filesystem::absolute(root_dir, ec).lexically_normal();
  if (ec) return Unavailable("storage: bad root " + root_dir + ": " + ec.message());
  if (!root.has_filename()) root = root.parent_path();  // "dir/" names dir
  if (std::filesystem::exists(root, ec)) {
    EC_RETURN_IF_ERROR(CheckWritableFolder(root));
    const std::filesystem::path exports = root / "exports";
    if (std::filesystem::exists(exports, ec)) EC_RETURN_IF_ERROR(CheckWritableFolder(exports));
    return "folder " + root.string() + " is writable";
  }
  std::filesystem::path ancestor = root.parent_path();
  while (!std::filesystem::exists(ancestor, ec) && ancestor.has_relative_path()) {
    ancestor = ancestor.parent_path();
  }
  EC_RETURN_IF_ERROR(CheckWritableFolder(ancestor));
  return "folder " + root.string() + " does not exist yet; serve creates it in " +
         ancestor.string() + ", which is writable";
}

}  // namespace export_center::storage
