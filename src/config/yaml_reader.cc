#include "config/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>

extern char** environ;  // POSIX: the process's environment, for EnvOverlay

#include "common/ascii.h"
#include "common/credentials.h"
#include "common/utf8.h"

namespace export_center::config {
namespace {

std::string NodeKind(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  if (node.IsScalar()) return "a scalar";
  return "null";
}

std::string RangeText(int64_t min, int64_t max) {
  return "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

// Levenshtein distance, to suggest the key an operator probably meant.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string Suggestion(std::string_view key, const std::vector<std::string>& known) {
  std::string best;
  size_t best_distance = 3;  // more than two edits is not a typo
  for (const std::string& candidate : known) {
    size_t d = EditDistance(key, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// "orders-replica" -> "ORDERS_REPLICA": one segment of a variable name.
std::string NameSegment(std::string_view segment) {
  std::string out;
  for (char ch : segment) {
    out += std::isalnum(static_cast<unsigned char>(ch)) ? ToUpperAscii(ch) : '_';
  }
  return out;
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    parts.emplace_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  return parts;
}

// The alias name of `key_path` under `alias`, or "" when the pattern does not match.
std::string AliasName(const EnvOverlay::Alias& alias, std::string_view key_path) {
  const std::vector<std::string> pattern = SplitPath(alias.key_pattern);
  const std::vector<std::string> parts = SplitPath(key_path);
  if (pattern.size() != parts.size()) return "";
  std::string wildcard;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (pattern[i] == "*") {
      wildcard = NameSegment(parts[i]);
    } else if (pattern[i] != parts[i]) {
      return "";
    }
  }
  std::string name = alias.name_pattern;
  if (size_t star = name.find('*'); star != std::string::npos) name.replace(star, 1, wildcard);
  return name;
}

// A secret's value is never shown: keys named like one, whatever section.
bool IsSecretKey(std::string_view key) {
  const std::string k = ToLowerAscii(std::string(key));
  for (const char* word : {"secret", "token", "password"}) {
    if (k.find(word) != std::string::npos) return true;
  }
  for (std::string_view end : {"-key", "-keys"}) {
    if (k.size() >= end.size() && k.compare(k.size() - end.size(), end.size(), end) == 0) {
      return true;
    }
  }
  return false;
}

std::string Shown(std::string_view key, const std::string& value) {
  if (IsSecretKey(key)) return value.empty() ? "(empty)" : "(hidden)";
  return Quote(value);
}

template <typename T>
std::string ShownList(const std::vector<T>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    if constexpr (std::is_same_v<T, std::string>) {
      text += Quote(values[i]);
    } else {
      text += std::to_string(values[i]);
    }
  }
  return text + "]";
}

// A list variable: a YAML flow list "[60, 900]", or "60,900".
YAML::Node ListNode(const std::string& value, const std::string& where, ErrorList* errors) {
  if (!value.empty() && value[0] == '[') {
    StatusOr<YAML::Node> parsed = ParseYaml(value, where);
    if (parsed.ok()) return *parsed;
    errors->Add(where, "is not a YAML flow list", "e.g. [60, 900] or 60,900");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  YAML::Node list(YAML::NodeType::Sequence);
  if (value.empty()) return list;  // the value "": an empty list
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    std::string item = value.substr(start, comma - start);
    const size_t first = item.find_first_not_of(" \t");
    const size_t last = item.find_last_not_of(" \t");
    list.push_back(first == std::string::npos ? "" : item.substr(first, last - first + 1));
    start = comma + 1;
  }
  return list;
}

}  // namespace

// ---- EnvOverlay ----

EnvOverlay::EnvOverlay(std::map<std::string, std::string> vars, std::vector<Alias> aliases,
                       std::set<std::string> not_settings)
    : vars_(std::move(vars)),
      aliases_(std::move(aliases)),
      not_settings_(std::move(not_settings)) {}

std::map<std::string, std::string> EnvOverlay::ProcessVariables() {
  std::map<std::string, std::string> vars;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos || text.substr(0, kPrefix.size()) != kPrefix) continue;
    vars.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return vars;
}

std::string EnvOverlay::NameOf(std::string_view key_path) {
  std::string name(kPrefix);
  const std::vector<std::string> parts = SplitPath(key_path);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) name += "__";
    name += NameSegment(parts[i]);
  }
  return name;
}

std::optional<EnvOverlay::Hit> EnvOverlay::Lookup(std::string_view key_path, std::string_view where,
                                                  ErrorList* errors) {
  std::vector<std::string> names = {NameOf(key_path)};
  for (const Alias& alias : aliases_) {
    if (!alias.when_key.empty()) {
      auto chosen = choices_.find(alias.when_key);
      const std::string value = chosen == choices_.end() ? "" : chosen->second;
      if (std::find(alias.when_values.begin(), alias.when_values.end(), value) ==
          alias.when_values.end()) {
        continue;
      }
    }
    std::string name = AliasName(alias, key_path);
    if (!name.empty()) names.push_back(std::move(name));
  }
  std::optional<Hit> hit;
  for (const std::string& name : names) {
    asked_.insert(name);
    auto it = vars_.find(name);
    // Blank counts as unset: an exported but empty variable (a Compose
    // ${VAR} of an unset VAR) must not wipe the file's value.
    if (it == vars_.end() || it->second.empty()) continue;
    const std::string value = it->second == "\"\"" ? "" : it->second;
    if (!hit) {
      hit = Hit{name, value};
    } else if (hit->value != value) {
      errors->Add(where, hit->name + " and " + name + " are both set, to different values",
                  "set one of them");
    }
  }
  return hit;
}

void EnvOverlay::ReportUnknown(ErrorList* errors) const {
  const std::vector<std::string> known(asked_.begin(), asked_.end());
  for (const auto& [name, value] : vars_) {
    if (asked_.count(name) > 0 || not_settings_.count(name) > 0) continue;
    errors->Add(name, "names no setting" + Suggestion(name, known),
                "EXPORT_CENTER_ + the key path, sections joined by __, - as _, upper case "
                "(docs/configuration.md#environment)");
  }
}

void ErrorList::Add(std::string_view path, std::string_view what) {
  lines_.push_back(std::string(path) + ": " + std::string(what));
}

void ErrorList::Add(std::string_view path, std::string_view what, std::string_view allowed) {
  lines_.push_back(std::string(path) + ": " + std::string(what) +
                   "; allowed: " + std::string(allowed));
}

Status ErrorList::ToStatus() const {
  if (lines_.empty()) return Status::Ok();
  std::string text;
  for (const std::string& line : lines_) {
    if (!text.empty()) text += '\n';
    text += line;
  }
  return InvalidArgument(std::move(text));
}

std::string JoinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string Quote(std::string_view text) {
  constexpr size_t kMax = 63;  // 60 bytes and "..."
  return "\"" + utf8::Excerpt(credentials::Mask(text), kMax) + "\"";
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    if (!text.empty()) text += ", ";
    text += item;
  }
  return text;
}

bool ReadInt64(const YAML::Node& node, std::string_view path, int64_t min, int64_t max,
               ErrorList* errors, int64_t* out) {
  if (!node.IsScalar()) {
    errors->Add(path, "expected an integer, got " + NodeKind(node), RangeText(min, max));
    return false;
  }
  const std::string& text = node.Scalar();
  int64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end) {
    errors->Add(path, Quote(text) + " is not an integer", RangeText(min, max));
    return false;
  }
  if (value < min || value > max) {
    errors->Add(path, text + " is out of range", RangeText(min, max));
    return false;
  }
  *out = value;
  return true;
}

bool ReadString(const YAML::Node& node, std::string_view path, ErrorList* errors,
                std::string* out) {
  if (!node.IsScalar()) {
    errors->Add(path, "expected a string, got " + NodeKind(node));
    return false;
  }
  *out = node.Scalar();
  return true;
}

MapReader::MapReader(const YAML::Node& node, std::string path, ErrorList* errors, EnvOverlay* env)
    : path_(std::move(path)), errors_(errors), env_(env) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    errors_->Add(path_.empty() ? "(document)" : path_,
                 "expected a mapping of keys, got " + NodeKind(node));
    valid_ = false;
    return;
  }
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) {
      errors_->Add(KeyPath("?"), "a key must be a plain string, got " + NodeKind(it->first));
      continue;
    }
    std::string key = it->first.Scalar();
    // yaml-cpp keeps duplicate keys and lookups see only one of them; a second
    // copy is almost always a merge accident, so it is an error, not a choice.
    if (!seen.insert(key).second) {
      errors_->Add(KeyPath(key), "duplicate key");
      continue;
    }
    entries_.emplace_back(std::move(key), it->second);
  }
}

bool MapReader::Has(std::string_view key) const {
  for (const auto& [name, value] : entries_) {
    if (name == key) return !value.IsNull();
  }
  return false;
}

YAML::Node MapReader::Get(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
    known_.emplace_back(key);
  }
  for (const auto& [name, value] : entries_) {
    if (name == key) return value;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

MapReader::Source MapReader::Resolve(std::string_view key, Shape shape) {
  Source source{Get(key), KeyPath(key), "default"};
  if (source.node.IsDefined() && !source.node.IsNull()) source.origin = "file";
  if (env_ == nullptr) return source;
  std::optional<EnvOverlay::Hit> hit = env_->Lookup(source.where, source.where, errors_);
  if (!hit) return source;
  source.origin = hit->name;
  source.where += " (from " + hit->name + ")";
  source.node =
      shape == Shape::kList ? ListNode(hit->value, source.where, errors_) : YAML::Node(hit->value);
  return source;
}

void MapReader::Note(std::string_view key, const Source& source, std::string shown) {
  if (env_ != nullptr) env_->Record({KeyPath(key), source.origin, std::move(shown)});
}

bool MapReader::String(std::string_view key, std::string* out) {
  Source source = Resolve(key, Shape::kScalar);
  const bool present = source.node.IsDefined() && !source.node.IsNull();
  const bool ok = present && ReadString(source.node, source.where, errors_, out);
  Note(key, source, Shown(key, *out));
  return ok;
}

bool MapReader::Bool(std::string_view key, bool* out) {
  Source source = Resolve(key, Shape::kScalar);
  const bool ok = ReadBool(source, out);
  Note(key, source, *out ? "true" : "false");
  return ok;
}

bool MapReader::ReadBool(const Source& source, bool* out) {
  const YAML::Node& node = source.node;
  if (!node.IsDefined() || node.IsNull()) return false;
  // YAML 1.2 core schema: only true/false. yes/no/on/off are YAML 1.1 traps.
  if (node.IsScalar()) {
    const std::string text = ToLowerAscii(node.Scalar());
    if (text == "true" || text == "false") {
      *out = text == "true";
      return true;
    }
    errors_->Add(source.where, Quote(node.Scalar()) + " is not a boolean", "true, false");
    return false;
  }
  errors_->Add(source.where, "expected a boolean, got " + NodeKind(node), "true, false");
  return false;
}

bool MapReader::Int(std::string_view key, int* out, int64_t min, int64_t max) {
  int64_t value = *out;  // so that a default is recorded as it is
  if (!Int64(key, &value, min, max)) return false;
  *out = static_cast<int>(value);
  return true;
}

bool MapReader::Int64(std::string_view key, int64_t* out, int64_t min, int64_t max) {
  Source source = Resolve(key, Shape::kScalar);
  const bool present = source.node.IsDefined() && !source.node.IsNull();
  const bool ok = present && ReadInt64(source.node, source.where, min, max, errors_, out);
  Note(key, source, std::to_string(*out));
  return ok;
}

bool MapReader::IntList(std::string_view key, std::vector<int>* out, int64_t min, int64_t max) {
  Source source = Resolve(key, Shape::kList);
  const bool ok = ReadIntList(source, out, min, max);
  Note(key, source, ShownList(*out));
  return ok;
}

bool MapReader::ReadIntList(const Source& source, std::vector<int>* out, int64_t min, int64_t max) {
  const YAML::Node& node = source.node;
  if (!node.IsDefined() || node.IsNull()) return false;
  const std::string& path = source.where;
  if (!node.IsSequence() || node.size() == 0) {
    errors_->Add(path, "expected a non-empty list of integers, got " + NodeKind(node),
                 "each in " + RangeText(min, max));
    return false;
  }
  std::vector<int> values;
  bool ok = true;
  for (size_t i = 0; i < node.size(); ++i) {
    int64_t value = 0;
    if (ReadInt64(node[i], path + "[" + std::to_string(i) + "]", min, max, errors_, &value)) {
      values.push_back(static_cast<int>(value));
    } else {
      ok = false;
    }
  }
  if (ok) *out = std::move(values);
  return ok;
}

bool MapReader::StringList(std::string_view key, std::vector<std::string>* out) {
  Source source = Resolve(key, Shape::kList);
  const bool ok = ReadStringList(source, out);
  Note(key, source, IsSecretKey(key) && !out->empty() ? "(hidden)" : ShownList(*out));
  return ok;
}

bool MapReader::ReadStringList(const Source& source, std::vector<std::string>* out) {
  const YAML::Node& node = source.node;
  if (!node.IsDefined() || node.IsNull()) return false;
  const std::string& path = source.where;
  if (!node.IsSequence()) {
    errors_->Add(path, "expected a list of strings, got " + NodeKind(node));
    return false;
  }
  std::vector<std::string> values;
  bool ok = true;
  for (size_t i = 0; i < node.size(); ++i) {
    std::string value;
    if (ReadString(node[i], path + "[" + std::to_string(i) + "]", errors_, &value)) {
      values.push_back(std::move(value));
    } else {
      ok = false;
    }
  }
  if (ok) *out = std::move(values);
  return ok;
}

bool MapReader::Enum(std::string_view key, std::string* out,
                     const std::vector<std::string>& allowed) {
  Source source = Resolve(key, Shape::kScalar);
  std::string value;
  bool ok = source.node.IsDefined() && !source.node.IsNull() &&
            ReadString(source.node, source.where, errors_, &value);
  if (ok && std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    errors_->Add(source.where, Quote(value) + " is not supported", JoinList(allowed));
    ok = false;
  }
  if (ok) *out = std::move(value);
  if (env_ != nullptr) env_->RecordChoice(KeyPath(key), *out);
  Note(key, source, Quote(*out));
  return ok;
}

StatusOr<YAML::Node> ParseYaml(std::string_view text, const std::string& path) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    // yaml-cpp marks are zero-based; editors count from one.
    return InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": cannot parse YAML: " + e.what());
  }
}

StatusOr<YAML::Node> LoadYamlFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("config file " + Quote(path) + " cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  return ParseYaml(text.str(), path);
}

void MapReader::Finish() {
  for (const auto& [name, value] : entries_) {
    if (std::find(known_.begin(), known_.end(), name) != known_.end()) continue;
    errors_->Add(KeyPath(name), "unknown key" + Suggestion(name, known_), JoinList(known_));
  }
}

}  // namespace export_center::config
