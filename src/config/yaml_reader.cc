#include "config/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

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

}  // namespace

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

MapReader::MapReader(const YAML::Node& node, std::string path, ErrorList* errors)
    : path_(std::move(path)), errors_(errors) {
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

bool MapReader::String(std::string_view key, std::string* out) {
  YAML::Node node = Get(key);
  if (!node.IsDefined() || node.IsNull()) return false;
  return ReadString(node, KeyPath(key), errors_, out);
}

bool MapReader::Bool(std::string_view key, bool* out) {
  YAML::Node node = Get(key);
  if (!node.IsDefined() || node.IsNull()) return false;
  // YAML 1.2 core schema: only true/false. yes/no/on/off are YAML 1.1 traps.
  if (node.IsScalar()) {
    const std::string text = ToLowerAscii(node.Scalar());
    if (text == "true" || text == "false") {
      *out = text == "true";
      return true;
    }
    errors_->Add(KeyPath(key), Quote(node.Scalar()) + " is not a boolean", "true, false");
    return false;
  }
  errors_->Add(KeyPath(key), "expected a boolean, got " + NodeKind(node), "true, false");
  return false;
}

bool MapReader::Int(std::string_view key, int* out, int64_t min, int64_t max) {
  int64_t value = 0;
  if (!Int64(key, &value, min, max)) return false;
  *out = static_cast<int>(value);
  return true;
}

bool MapReader::Int64(std::string_view key, int64_t* out, int64_t min, int64_t max) {
  YAML::Node node = Get(key);
  if (!node.IsDefined() || node.IsNull()) return false;
  return ReadInt64(node, KeyPath(key), min, max, errors_, out);
}

bool MapReader::IntList(std::string_view key, std::vector<int>* out, int64_t min, int64_t max) {
  YAML::Node node = Get(key);
  if (!node.IsDefined() || node.IsNull()) return false;
  std::string path = KeyPath(key);
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
  YAML::Node node = Get(key);
  if (!node.IsDefined() || node.IsNull()) return false;
  std::string path = KeyPath(key);
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
  std::string value;
  if (!String(key, &value)) return false;
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    errors_->Add(KeyPath(key), Quote(value) + " is not supported", JoinList(allowed));
    return false;
  }
  *out = std::move(value);
  return true;
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
