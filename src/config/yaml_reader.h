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
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "config/config.h"

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

// The environment as a layer over the file (docs/configuration.md#environment).
// Every key a MapReader accessor reads has a variable: EXPORT_CENTER_, then the
// key path with sections joined by "__", "-" as "_", upper case
// (consumer.concurrency -> EXPORT_CENTER_CONSUMER__CONCURRENCY;
// datasources.orders-replica.url -> EXPORT_CENTER_DATASOURCES__ORDERS_REPLICA__URL).
// A set, non-blank variable wins over the file; "" (two quote characters)
// sets an empty string. Older names stay as aliases. Every EXPORT_CENTER_
// variable that no reader asked for is a problem (ReportUnknown): a typo must
// not be ignored. Not thread-safe; one overlay per parse.
class EnvOverlay {
 public:
  // Another name for the keys matching `key_pattern`; a "*" segment stands for
  // a user-chosen name (datasources.*.url), written UpperSnake in place of "*"
  // in `name_pattern` (EXPORT_CENTER_DATASOURCE_URL_*).
  // With `when_key`, the alias applies only while that enum key (read
  // before) has one of `when_values`.
  struct Alias {
    std::string key_pattern;
    std::string name_pattern;
    std::string when_key = "";
    std::vector<std::string> when_values = {};
  };
  // `vars`: the EXPORT_CENTER_ variables (ProcessVariables() or a test's).
  // `not_settings`: names the process ignores (other tools' variables).
  EnvOverlay(std::map<std::string, std::string> vars, std::vector<Alias> aliases,
             std::set<std::string> not_settings);

  static constexpr std::string_view kPrefix = "EXPORT_CENTER_";
  // The EXPORT_CENTER_ variables of this process.
  static std::map<std::string, std::string> ProcessVariables();
  // The rule's variable for a key path.
  static std::string NameOf(std::string_view key_path);

  struct Hit {
    std::string name;
    std::string value;
  };
  // The variable that sets `key_path`: its rule name, else an alias; none
  // when unset or blank. A rule name and an alias set to different values
  // are reported under `where`.
  std::optional<Hit> Lookup(std::string_view key_path, std::string_view where, ErrorList* errors);
  // A name read elsewhere (a reader outside this overlay), so it is not unknown.
  void MarkKnown(std::string name) { asked_.insert(std::move(name)); }
  // Reports each variable nobody asked for, with the nearest known name.
  void ReportUnknown(ErrorList* errors) const;

  void Record(SettingSource source) { sources_.push_back(std::move(source)); }
  // An enum key's effective value, for the aliases' conditions.
  void RecordChoice(std::string key_path, std::string value) {
    choices_[std::move(key_path)] = std::move(value);
  }
  const std::vector<SettingSource>& sources() const { return sources_; }

 private:
  std::map<std::string, std::string> vars_;
  std::vector<Alias> aliases_;
  std::set<std::string> not_settings_;
  std::set<std::string> asked_;
  std::vector<SettingSource> sources_;
  std::map<std::string, std::string> choices_;
};

// Reads one YAML mapping. Each accessor marks its key as known; Finish()
// reports the keys nobody asked for as unknown (typos must not pass silently)
// and lists the known ones as allowed. A missing or null node reads as an
// empty mapping, so every key keeps its default. Duplicate keys are errors.
// With an EnvOverlay, every typed accessor takes the key's variable first and
// records where the value came from; Get() (a mapping) reads the file only.
class MapReader {
 public:
  MapReader(const YAML::Node& node, std::string path, ErrorList* errors, EnvOverlay* env = nullptr);
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;

  const std::string& path() const { return path_; }
  // False when the node exists but is not a mapping (already reported).
  bool valid() const { return valid_; }
  ErrorList* errors() const { return errors_; }
  // The overlay child readers inherit (nullptr: the file alone).
  EnvOverlay* env() const { return env_; }

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

  // A key's value as the accessors see it: the variable's, else the file's.
  struct Source {
    YAML::Node node;     // undefined or null: absent
    std::string where;   // the key path for messages, naming the variable
    std::string origin;  // "file", "default" or the variable's name
  };
  enum class Shape { kScalar, kList };
  Source Resolve(std::string_view key, Shape shape);
  bool ReadBool(const Source& source, bool* out);
  bool ReadIntList(const Source& source, std::vector<int>* out, int64_t min, int64_t max);
  bool ReadStringList(const Source& source, std::vector<std::string>* out);
  void Note(std::string_view key, const Source& source, std::string shown);

  std::string path_;
  ErrorList* errors_;
  EnvOverlay* env_;
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
