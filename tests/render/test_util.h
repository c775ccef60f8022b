#pragma once
// Helpers for the render tests: a file sink, a scratch directory and a way to
// run the independent readers (python3-openpyxl, LibreOffice, unzip).

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/byte_sink.h"

namespace export_center::render::test_util {

// Appends to a file; Unavailable on a write error.
class FileSink final : public ByteSink {
 public:
  explicit FileSink(const std::string& path, const char* mode = "wb")
      : file_(std::fopen(path.c_str(), mode)) {}
  ~FileSink() override { Close(); }
  bool ok() const { return file_ != nullptr; }
  void Close() {
    if (file_ != nullptr) std::fclose(file_);
    file_ = nullptr;
  }
  Status Append(std::string_view bytes) override {
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
      return Unavailable("fwrite failed");
    }
    return Status::Ok();
  }

 private:
  std::FILE* file_;
};

// A fresh directory under the test temp dir, removed by the destructor.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/ec_render_XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs a shell command and returns its stdout; *exit_code gets the status.
inline std::string RunCommand(const std::string& command, int* exit_code = nullptr) {
  std::string out;
  std::FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  if (exit_code != nullptr) *exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

// Debian's interpreter: openpyxl is installed for it, not for a pyenv python3.
constexpr const char* kPython = "/usr/bin/python3";

}  // namespace export_center::render::test_util
