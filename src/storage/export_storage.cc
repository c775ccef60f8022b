#include "storage/export_storage.h"

#include <ctime>
#include <string_view>
#include <vector>

#include "common/encoding.h"
#include "common/ids.h"

namespace export_center::storage {
namespace {

bool AllDigits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return !s.empty();
}

int ToInt(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

// 8-4-4-4-12 lower-case hex, as NewUuid makes them.
bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t dash : {8u, 13u, 18u, 23u}) {
    if (s[dash] != '-') return false;
  }
  return IsLowerHex(s.substr(0, 8)) && IsLowerHex(s.substr(9, 4)) && IsLowerHex(s.substr(14, 4)) &&
         IsLowerHex(s.substr(19, 4)) && IsLowerHex(s.substr(24, 12));
}

// 1..8 characters of [a-z0-9]: "xlsx", "csv".
// The extensions the center's writers produce (render::FileExtension).
bool IsExtension(std::string_view s) {
  return s == "xlsx" || s == "csv" || s == "csv.gz" || s == "zip";
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

}  // namespace

std::string MakeObjectKey(int64_t task_id, const std::string& extension) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char date[16];
  std::strftime(date, sizeof date, "%Y/%m/%d", &tm);
  return "exports/" + std::string(date) + "/" + std::to_string(task_id) + "/" + NewUuid() + "." +
         extension;
}

bool IsValidObjectKey(const std::string& key) {
  // exports / yyyy / MM / dd / taskId / uuid.ext : exactly six segments, each
  // of a fixed alphabet, so "..", "/x" and "a//b" can never pass.
  if (key.size() > 128) return false;
  const std::vector<std::string_view> p = Split(key, '/');
  if (p.size() != 6 || p[0] != "exports") return false;
  if (p[1].size() != 4 || !AllDigits(p[1])) return false;
  if (p[2].size() != 2 || !AllDigits(p[2]) || ToInt(p[2]) < 1 || ToInt(p[2]) > 12) return false;
  if (p[3].size() != 2 || !AllDigits(p[3]) || ToInt(p[3]) < 1 || ToInt(p[3]) > 31) return false;
  const std::string_view task = p[4];
  if (task.size() > 19 || !AllDigits(task) || task[0] == '0') return false;
  if (task.size() == 19 && task > "9223372036854775807") return false;
  const std::string_view file = p[5];
  if (file.size() < 38 || file[36] != '.') return false;
  return IsUuid(file.substr(0, 36)) && IsExtension(file.substr(37));
}

StatusOr<std::optional<std::string>> ExportStorage::PresignedGetUrl(
    const std::string& key, const DownloadHeaders& headers) {
  if (!IsValidObjectKey(key)) return InvalidArgument("storage: invalid object key \"" + key + "\"");
  return std::optional<std::string>();
}

std::optional<int64_t> TaskIdOfObjectKey(const std::string& key) {
  if (!IsValidObjectKey(key)) return std::nullopt;
  return ParseId(Split(key, '/')[4]);
}

}  // namespace export_center::storage
