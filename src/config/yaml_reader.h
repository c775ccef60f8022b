#pragma once
// Helpers that read typed values out of a YAML mapping and collect every
// problem instead of stopping at the first one, so an operator fixes a config
// file in one pass. Private to config/: only its .cc files include it, so
// yaml-cpp stays out of every other component.
//
// Every problem is one line "key.path: what is wrong; allowed: ...". yaml-cpp
// exceptions never escape these helpers. Not thread-safe; one reader per parse.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace export_center::config {

// Collects problems; turns them into one InvalidArgument Status.
class ErrorList {
 public:
  // Adds "path: what".
  void Add(std::string_view path, std::string_view what);
  // Adds "path: what; allowed: allowed".
  void Add(std::string_view path, std::string_view what, std::string_view allowed);

  bool empty() const { return lines_.empty(); }
  const std::vector<std::string>& lines() const { return lines_; }
  // OK when empty; otherwise InvalidArgument with one problem per line.
  Status ToStatus() const;

 private:
  std::vector<std::string> lines_;
};

// "server" + "port" -> "server.port"; "" + "server" -> "server".
std::string JoinPath(std::string_view parent, std::string_view key);

// Quotes a scalar for an error message: credentials in it masked
// (common/credentials.h), shortened so huge values do not end up in logs whole.
std::string Quote(std::string_view text);

// Reads one YAML mapping. Each accessor marks its key as known; Finish()
// reports the keys nobody asked for as unknown (typos must not pass silently)
// and lists the known ones as allowed. A missing or null node reads as an
// empty mapping, so every key keeps its default. Duplicate keys are errors.
class MapReader {
 public:
  MapReader(const YAML::Node& node, std::string path, ErrorList* errors);
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;

  const std::string& path() const { return path_; }
  // False when the node exists but is not a mapping (already reported).
  bool valid() const { return valid_; }
  ErrorList* errors() const { return errors_; }

  bool Has(std::string_view key) const;
  // Marks `key` known and returns its value (an undefined node when absent).
  YAML::Node Get(std::string_view key);

  // Each leaves *out unchanged when the key is absent, null or invalid.
  // Returns true when a valid value was read.
  bool String(std::string_view key, std::string* out);
  bool Bool(std::string_view key, bool* out);
  bool Int(std::string_view key, int* out, int64_t min, int64_t max);
  bool Int64(std::string_view key, int64_t* out, int64_t min, int64_t max);
  bool IntList(std::string_view key, std::vector<int>* out, int64_t min, int64_t max);
  bool StringList(std::string_view key, std::vector<std::string>* out);
  // A string that must be one of `allowed`.
  bool Enum(std::string_view key, std::string* out, const std::vector<std::string>& allowed);

  // The entries in file order, for maps keyed by user names (definitions,
  // provider-services). Marks nothing; use instead of Finish().
  const std::vector<std::pair<std::string, YAML::Node>>& entries() const { return entries_; }

  // Reports unknown keys. Call after all accessors.
  void Finish();

 private:
  std::string KeyPath(std::string_view key) const { return JoinPath(path_, key); }

  std::string path_;
  ErrorList* errors_;
  bool valid_ = true;
  std::vector<std::pair<std::string, YAML::Node>> entries_;
  std::vector<std::string> known_;
};

// Reads a scalar as a 64-bit integer ("42", "-7"; no floats, no hex). Reports
// type and range problems under `path`.
bool ReadInt64(const YAML::Node& node, std::string_view path, int64_t min, int64_t max,
               ErrorList* errors, int64_t* out);

// Reads a scalar as a string; sequences and mappings are reported.
bool ReadString(const YAML::Node& node, std::string_view path, ErrorList* errors, std::string* out);

// "a, b, c".
std::string JoinList(const std::vector<std::string>& items);

// Parses YAML text, turning yaml-cpp exceptions into a Status ("PATH:LINE:COLUMN:
// message" for syntax errors; `path` only names the text in messages).
StatusOr<YAML::Node> ParseYaml(std::string_view text, const std::string& path);

// Reads and parses a YAML file: NotFound when it cannot be opened, otherwise
// as ParseYaml.
StatusOr<YAML::Node> LoadYamlFile(const std::string& path);

}  // namespace export_center::config
