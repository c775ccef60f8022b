#include "config/registry_yaml.h"

#include <cctz/time_zone.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <utility>

#include "common/utf8.h"
#include "config/config.h"
#include "config/config_internal.h"
#include "config/secret_check.h"
#include "config/yaml_reader.h"
#include "task/column_options.h"
#include "task/language.h"
#include "task/task.h"

namespace export_center::config {
namespace {

using registry::ExportDefinition;
using registry::FilePasswordRule;
using registry::ParameterSpec;
using registry::ProviderService;
using registry::RegistrySnapshot;
using registry::SourceKind;

constexpr size_t kMaxParameters = 20;
constexpr size_t kMaxTitleChars = 100;
const char kTypePattern[] = "^[A-Z][A-Z0-9_]{0,63}$";
const char kServicePattern[] = "^[a-z][a-z0-9-]{0,63}$";
const char kPathPattern[] = "^/internal/exports/v1/[A-Z0-9_]+/batches$";
const char kPermissionPattern[] = "^[a-z]+:[a-z-]+:[a-z-]+$";
const char kQueryIdPattern[] = "^[A-Za-z0-9_.:-]{1,128}$";
const char kParameterPattern[] = "^[A-Za-z][A-Za-z0-9_]{0,63}$";
const char kColumnKeyPattern[] = "^[A-Za-z0-9_.-]{1,64}$";
constexpr size_t kMaxGovernedColumns = 100;
const std::vector<std::string> kParameterTypes = {"STRING", "INTEGER", "BOOLEAN", "DATE",
                                                  "STRING_LIST"};

bool Matches(const std::string& text, const char* pattern) {
  return std::regex_match(text, std::regex(pattern));
}

bool HasControlChar(const std::string& text) {
  for (unsigned char ch : text) {
    if (ch < 0x20 || ch == 0x7f) return true;
  }
  return false;
}

// ---- provider-services ----

// http(s)://host[:port], optionally with a plain path prefix (a service behind
// a servlet context path and the SDK's base path: http://host:8080/orders/export).
// A query, fragment, user info, dot segment or escape in the allow-list would let
// a config edit smuggle a different target past review.
constexpr char kBaseUrlAllowed[] =
    "http(s)://host[:port][/segment...] with no query, fragment, user info or dot segments";

// The "/a/b" after the authority of an http(s) URL, "" when it has none.
std::string UrlPath(const std::string& url) {
  std::string::size_type scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  std::string::size_type slash = url.find('/', scheme + 3);
  return slash == std::string::npos ? "" : url.substr(slash);
}

void CheckBasePath(const std::string& url, const std::string& base_path, const std::string& path,
                   ErrorList* errors) {
  static const std::regex kSegments(R"(^(/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*$)");
  if (!std::regex_match(base_path, kSegments) || base_path.find("/..") != std::string::npos) {
    errors->Add(path, Quote(url) + " has a path that is not plain /segment[/segment...]",
                kBaseUrlAllowed);
  }
}

void CheckBaseUrl(const std::string& url, const std::string& path, ErrorList* errors) {
  const char* kAllowed = kBaseUrlAllowed;
  static const std::regex kScheme("^https?://.*");
  if (!std::regex_match(url, kScheme)) {
    errors->Add(path, Quote(url) + " must start with http:// or https://", kAllowed);
    return;
  }
  std::string rest = url.substr(url.find("://") + 3);
  std::string authority = rest.substr(0, rest.find('/'));
  if (rest.find('@') != std::string::npos) {
    errors->Add(path, Quote(url) + " must not contain user info", kAllowed);
    return;
  }
  if (rest.find_first_of("?#") != std::string::npos) {
    errors->Add(path, Quote(url) + " must not have a query or fragment", kAllowed);
    return;
  }
  std::string base_path = UrlPath(url);
  if (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
  CheckBasePath(url, base_path, path, errors);
  static const std::regex kHostPort(R"(^([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(:([0-9]{1,5}))?$)");
  std::smatch m;
  if (!std::regex_match(authority, m, kHostPort)) {
    errors->Add(path, Quote(url) + " has an invalid host or port", kAllowed);
    return;
  }
  if (m[3].matched) {
    int port = std::stoi(m[3].str());
    if (port < 1 || port > 65535)
      errors->Add(path, "port " + m[3].str() + " is out of range", "[1, 65535]");
  }
}

ProviderService ParseService(const std::string& name, const YAML::Node& node,
                             const std::string& path, ErrorList* errors) {
  ProviderService s;
  s.name = name;
  if (!Matches(name, kServicePattern)) {
    errors->Add(path, "invalid provider service name", kServicePattern);
  }
  MapReader r(node, path, errors);
  bool has_url = r.String("base-url", &s.base_url);
  r.String("internal-token", &s.internal_token);
  r.Finish();
  if (!r.valid()) return s;
  if (has_url) {
    CheckBaseUrl(s.base_url, path + ".base-url", errors);
    // The client connects to the origin; every request path is prefixed.
    s.base_path = UrlPath(s.base_url);
    s.base_url.resize(s.base_url.size() - s.base_path.size());
    if (!s.base_path.empty() && s.base_path.back() == '/') s.base_path.pop_back();
  } else {
    errors->Add(path + ".base-url", "is required", kBaseUrlAllowed);
  }
  // Secrets belong in the environment; the file value is the fallback.
  std::string env = "EXPORT_CENTER_PROVIDER_TOKEN_" + UpperSnake(name);
  if (const char* token = std::getenv(env.c_str()); token != nullptr && *token != '\0') {
    s.internal_token = token;
  }
  CheckSecret(s.internal_token, kMinTokenBytes, path + ".internal-token", env, errors);
  return s;
}

std::map<std::string, ProviderService> ParseServices(const YAML::Node& node, ErrorList* errors) {
  std::map<std::string, ProviderService> services;
  MapReader r(node, "provider-services", errors);
  for (const auto& [name, value] : r.entries()) {
    services[name] = ParseService(name, value, JoinPath("provider-services", name), errors);
  }
  return services;
}

// ---- definitions ----

// Names of the `datasources` entries; config/ validates their contents.
std::set<std::string> DatasourceNames(const YAML::Node& node) {
  std::set<std::string> names;
  if (!node.IsMap()) return names;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar()) names.insert(it->first.Scalar());
  }
  return names;
}

std::string Keys(const std::set<std::string>& names) {
  std::vector<std::string> keys(names.begin(), names.end());
  return keys.empty() ? "(none defined)" : JoinList(keys);
}

std::string Keys(const std::map<std::string, ProviderService>& services) {
  std::set<std::string> names;
  for (const auto& entry : services) names.insert(entry.first);
  return Keys(names);
}

void CheckFileNamePattern(const std::string& pattern, const std::string& path, ErrorList* errors) {
  const std::vector<std::string>& placeholders = registry::FileNamePlaceholders();
  std::string allowed = "text with placeholders {" + JoinList(placeholders) + "}";
  if (pattern.empty() || pattern.size() > 200 || HasControlChar(pattern) ||
      pattern.find_first_of("/\\") != std::string::npos) {
    errors->Add(path, "must be 1..200 characters without control characters or / \\", allowed);
    return;
  }
  size_t pos = 0;
  while ((pos = pattern.find('{', pos)) != std::string::npos) {
    size_t end = pattern.find('}', pos);
    if (end == std::string::npos) {
      errors->Add(path, "unclosed '{' in " + Quote(pattern), allowed);
      return;
    }
    std::string name = pattern.substr(pos + 1, end - pos - 1);
    if (std::find(placeholders.begin(), placeholders.end(), name) == placeholders.end()) {
      errors->Add(path, "unknown placeholder {" + name + "}", allowed);
    }
    pos = end + 1;
  }
}

ParameterSpec ParseParameter(const YAML::Node& node, const std::string& path, ErrorList* errors) {
  ParameterSpec p;
  MapReader r(node, path, errors);
  bool has_name = r.String("name", &p.name);
  r.Enum("type", &p.type, kParameterTypes);
  bool has_title = r.String("title", &p.title);
  r.Bool("required", &p.required);
  bool has_allowed = r.StringList("allowed", &p.allowed);
  r.Finish();
  if (!r.valid()) return p;
  if (!has_name) {
    errors->Add(path + ".name", "is required", kParameterPattern);
  } else if (!Matches(p.name, kParameterPattern)) {
    errors->Add(path + ".name", Quote(p.name) + " is not a valid parameter name",
                kParameterPattern);
  }
  if (!has_title) p.title = p.name;
  if (has_allowed) {
    if (p.type == "BOOLEAN" || p.type == "DATE") {
      errors->Add(path + ".allowed", "is not supported for type " + p.type,
                  "STRING, STRING_LIST, INTEGER");
    }
    if (p.allowed.empty())
      errors->Add(path + ".allowed", "must not be an empty list", "one or more values");
    std::set<std::string> seen;
    for (const std::string& value : p.allowed) {
      if (value.empty())
        errors->Add(path + ".allowed", "contains an empty value", "non-empty strings");
      if (!seen.insert(value).second)
        errors->Add(path + ".allowed", "contains " + Quote(value) + " twice", "unique values");
    }
  }
  return p;
}

void ParseParameters(const YAML::Node& node, const std::string& path, ExportDefinition* def,
                     ErrorList* errors) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    errors->Add(path, "expected a list of parameters", "- {name, type, title, required, allowed}");
    return;
  }
  if (node.size() > kMaxParameters) {
    errors->Add(path, std::to_string(node.size()) + " parameters are too many",
                "at most " + std::to_string(kMaxParameters));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    std::string item_path = path + "[" + std::to_string(i) + "]";
    ParameterSpec p = ParseParameter(node[i], item_path, errors);
    if (!p.name.empty() && !names.insert(p.name).second) {
      errors->Add(item_path + ".name", Quote(p.name) + " is declared twice", "unique names");
    }
    def->parameters.push_back(std::move(p));
  }
}

// ---- columns (governance) ----

// The action and its options: keep-first/keep-last only with mask, hash-chars
// only with hash, so a rule says exactly what it does.
void ReadColumnAction(MapReader& r, const std::string& path, task::ColumnDecision* d,
                      ErrorList* errors) {
  std::string without = "omit";
  r.Enum("without", &without, {"omit", "mask", "hash"});
  d->action = task::ParseColumnAction(without).value_or(task::ColumnAction::kOmit);
  bool has_first = r.Int("keep-first", &d->keep_first, 0, 100);
  bool has_last = r.Int("keep-last", &d->keep_last, 0, 100);
  bool has_hash = r.Int("hash-chars", &d->hash_chars, 8, 64);
  if ((has_first || has_last) && d->action != task::ColumnAction::kMask) {
    errors->Add(path + (has_first ? ".keep-first" : ".keep-last"), "is only for without: mask",
                "omit it or set without: mask");
  }
  if (has_hash && d->action != task::ColumnAction::kHash) {
    errors->Add(path + ".hash-chars", "is only for without: hash", "omit it or set without: hash");
  }
}

// ---- languages (docs/configuration.md#rich-columns) ----

constexpr char kLanguageAllowed[] = "a BCP 47 tag such as zh-CN or en";
constexpr char kLocalizedAllowed[] = "a text, or a map of language tag to text";

// A text or a map language tag → text (task::LocalizedText). Each text must be
// 1..max_chars characters without control characters. False when absent.
bool ReadLocalized(const YAML::Node& node, const std::string& path, size_t max_chars,
                   ErrorList* errors, task::LocalizedText* out) {
  if (!node.IsDefined() || node.IsNull()) return false;
  auto check = [&](const std::string& where, const std::string& text) {
    if (text.empty() || HasControlChar(text) || utf8::CountCodePoints(text) > max_chars) {
      errors->Add(where, "must be 1.." + std::to_string(max_chars) +
                             " characters without control characters");
    }
  };
  if (node.IsMap()) {
    MapReader r(node, path, errors);
    if (r.entries().empty()) errors->Add(path, "is an empty map", kLocalizedAllowed);
    if (r.entries().size() > task::kMaxLanguages) {
      errors->Add(path, std::to_string(r.entries().size()) + " languages are too many",
                  "at most " + std::to_string(task::kMaxLanguages));
    }
    for (const auto& [tag, value] : r.entries()) {
      const std::string where = JoinPath(path, tag);
      if (!task::IsLocaleTag(tag)) {
        errors->Add(where, Quote(tag) + " is not a language tag", kLanguageAllowed);
      }
      std::string text;
      if (!ReadString(value, where, errors, &text)) continue;
      check(where, text);
      out->texts.emplace_back(tag, std::move(text));
    }
    return true;
  }
  std::string text;
  if (!ReadString(node, path, errors, &text)) return false;
  check(path, text);
  *out = task::LocalizedText::Plain(std::move(text));
  return true;
}

// ---- columns (governance and labels) ----

// `labels`: value → label (a text or a language map), within the bounds of
// a wire column's labels (task/column_options.h).
void ReadColumnLabels(const YAML::Node& node, const std::string& path, registry::ColumnLabels* out,
                      ErrorList* errors) {
  MapReader r(node, path, errors);
  if (!r.valid()) return;
  if (r.entries().empty()) errors->Add(path, "is an empty map", "value: label");
  if (r.entries().size() > task::kMaxLabelsPerColumn) {
    errors->Add(path, std::to_string(r.entries().size()) + " labels are too many",
                "at most " + std::to_string(task::kMaxLabelsPerColumn));
    return;
  }
  for (const auto& [value, label] : r.entries()) {
    const std::string where = JoinPath(path, value);
    if (value.empty() || value.size() > task::kMaxLabelKeyBytes) {
      errors->Add(where, "a labelled value must be 1..256 bytes");
    }
    task::LocalizedText text;
    if (ReadLocalized(label, where, task::kMaxLabelBytes, errors, &text)) {
      out->labels.emplace_back(value, std::move(text));
    } else if (!label.IsDefined() || label.IsNull()) {
      errors->Add(where, "has no label", kLocalizedAllowed);
    }
  }
}

// One entry of `columns`: a governance rule (required-permission, without…),
// labels (labels, label-missing), or both. Adds what it holds to `def`.
void ParseColumnEntry(const std::string& key, const YAML::Node& node, const std::string& path,
                      ExportDefinition* def, ErrorList* errors) {
  task::ColumnRule rule;
  rule.key = key;
  rule.without.key = key;
  if (!Matches(key, kColumnKeyPattern)) {
    errors->Add(path, Quote(key) + " is not a valid column key", kColumnKeyPattern);
  }
  MapReader r(node, path, errors);
  bool has_permission = r.String("required-permission", &rule.required_permission);
  ReadColumnAction(r, path, &rule.without, errors);
  registry::ColumnLabels labels;
  labels.key = key;
  const YAML::Node label_node = r.Get("labels");
  const bool has_labels = label_node.IsDefined() && !label_node.IsNull();
  if (has_labels) ReadColumnLabels(label_node, path + ".labels", &labels, errors);
  std::string missing;
  if (r.Enum("label-missing", &missing, {"KEEP", "BLANK", "FAIL"})) {
    labels.label_missing = task::ParseLabelMissing(missing);
  }
  const bool governed = has_permission || r.Has("without");
  r.Bool("require-file-password", &rule.require_file_password);
  r.Finish();
  if (!r.valid()) return;
  if (has_labels || labels.label_missing) def->column_labels.push_back(std::move(labels));
  if (!governed && (has_labels || labels.label_missing)) return;  // labels only
  if (!has_permission || rule.required_permission.empty()) {
    errors->Add(path + ".required-permission", "is required", kPermissionPattern);
  } else if (!Matches(rule.required_permission, kPermissionPattern)) {
    errors->Add(path + ".required-permission",
                Quote(rule.required_permission) + " is not a valid permission", kPermissionPattern);
  }
  def->column_rules.push_back(std::move(rule));
}

void ParseColumnRules(const YAML::Node& node, const std::string& path, ExportDefinition* def,
                      ErrorList* errors) {
  if (!node.IsDefined() || node.IsNull()) return;
  MapReader r(node, path, errors);
  if (r.entries().size() > kMaxGovernedColumns) {
    errors->Add(path, std::to_string(r.entries().size()) + " governed columns are too many",
                "at most " + std::to_string(kMaxGovernedColumns));
  }
  for (const auto& [key, value] : r.entries()) {
    ParseColumnEntry(key, value, JoinPath(path, key), def, errors);
  }
}

// The source-specific fields: provider needs a path of its own type, and
// sql-template needs a query id and a datasource from the allow-list.
void CheckSource(const ExportDefinition& def, const std::string& path, bool has_consistency,
                 const std::set<std::string>& datasources, ErrorList* errors) {
  if (def.source == SourceKind::kProvider) {
    std::string expected = "/internal/exports/v1/" + def.name + "/batches";
    if (def.path.empty()) {
      errors->Add(path + ".provider-path", "is required for source provider", expected);
    } else if (!Matches(def.path, kPathPattern)) {
      errors->Add(path + ".provider-path", Quote(def.path) + " does not match " + kPathPattern,
                  expected);
    } else if (def.path != expected) {
      errors->Add(path + ".provider-path",
                  "the type in " + Quote(def.path) + " differs from the key " + def.name, expected);
    }
    if (!def.query_id.empty())
      errors->Add(path + ".query-id", "is only for source sql-template", "omit it");
    if (!def.datasource.empty())
      errors->Add(path + ".datasource", "is only for source sql-template", "omit it");
    if (has_consistency)
      errors->Add(path + ".consistency", "is only for source sql-template", "omit it");
    return;
  }
  if (!def.path.empty())
    errors->Add(path + ".provider-path", "is only for source provider", "omit it");
  if (def.query_id.empty()) {
    errors->Add(path + ".query-id", "is required for source sql-template", kQueryIdPattern);
  } else if (!Matches(def.query_id, kQueryIdPattern)) {
    errors->Add(path + ".query-id", Quote(def.query_id) + " is not a valid query id",
                kQueryIdPattern);
  }
  if (def.datasource.empty()) {
    errors->Add(path + ".datasource", "is required for source sql-template", Keys(datasources));
  } else if (datasources.count(def.datasource) == 0) {
    errors->Add(path + ".datasource", Quote(def.datasource) + " is not defined in datasources",
                Keys(datasources));
  }
}

struct Context {
  const std::map<std::string, ProviderService>& services;
  const std::set<std::string>& datasources;
  const TemplateInspector& inspect_template;
  ErrorList* errors;
};

void ReadDefinitionFields(MapReader& r, ExportDefinition* def, bool* has_consistency,
                          bool* has_permission) {
  std::string source = "provider";
  std::string app_scope = "PLATFORM";
  r.String("title", &def->title);
  if (r.Enum("source", &source, {"provider", "sql-template"})) {
    def->source = source == "provider" ? SourceKind::kProvider : SourceKind::kSqlTemplate;
  }
  r.String("provider-service", &def->service);
  r.String("provider-path", &def->path);
  r.String("query-id", &def->query_id);
  r.String("datasource", &def->datasource);
  *has_consistency = r.Enum("consistency", &def->consistency, {"strict", "lenient"});
  *has_permission = r.String("required-permission", &def->required_permission);
  if (r.Enum("app-scope", &app_scope, {"PLATFORM", "MERCHANT"})) {
    def->app_scope = *task::ParseAppCode(app_scope);
  }
  r.Bool("enabled", &def->enabled);
  r.Int64("max-rows", &def->max_rows, 1, 500000);
  int max_attempts = def->max_attempts;
  if (r.Int("max-attempts", &max_attempts, 1, 5)) def->max_attempts = max_attempts;
  r.Int("batch-size", &def->batch_size, 50, 1000);
  r.String("file-name-pattern", &def->file_name_pattern);
  r.String("timezone", &def->timezone);
  r.String("template-file", &def->template_file);
  std::string split = "sheets";
  if (r.Enum("split", &split, {"sheets", "files"}) && split == "files") def->rows_per_file = -1;
  int64_t rows_per_file = 0;
  if (r.Int64("rows-per-file", &rows_per_file, 1, 1048575)) {
    def->rows_per_file = def->rows_per_file == -1 ? rows_per_file : -2;
  }
  r.Bool("csv-gzip", &def->csv_gzip);
  r.String("locale", &def->locale);
  std::string file_password = "none";
  if (r.Enum("file-password", &file_password, {"none", "optional", "required"})) {
    def->file_password = file_password == "required"   ? FilePasswordRule::kRequired
                         : file_password == "optional" ? FilePasswordRule::kOptional
                                                       : FilePasswordRule::kNone;
  }
}

// locale, sheet-name, totals-label (docs/configuration.md#rich-columns).
void ReadLanguageFields(MapReader& r, const std::string& path, ExportDefinition* def,
                        ErrorList* errors) {
  if (!def->locale.empty() && !task::IsLocaleTag(def->locale)) {
    errors->Add(path + ".locale", Quote(def->locale) + " is not a language tag", kLanguageAllowed);
  }
  ReadLocalized(r.Get("sheet-name"), path + ".sheet-name", 31, errors, &def->sheet_name);
  ReadLocalized(r.Get("totals-label"), path + ".totals-label", 100, errors, &def->totals_label);
}

// template-file: a readable .xlsx template (≤ 10 MiB) whose single values are
// declared parameters or built-ins; split: files needs rows-per-file and
// cannot be combined with a template. Loads the template bytes into `def`.
void CheckFiles(ExportDefinition* def, const std::string& path,
                const TemplateInspector& inspect_template, ErrorList* errors) {
  if (def->rows_per_file == -1) {
    errors->Add(path + ".rows-per-file", "is required with split: files", "[1, 1048575]");
  } else if (def->rows_per_file == -2) {
    errors->Add(path + ".rows-per-file", "is only for split: files", "omit it or add split: files");
  }
  if (def->template_file.empty()) return;
  if (def->rows_per_file > 0) {
    errors->Add(path + ".split", "files cannot be combined with template-file",
                "split: sheets (the default) with a template");
  }
  const std::string where = path + ".template-file";
  std::ifstream in(def->template_file, std::ios::binary);
  if (!in) {
    errors->Add(where, "cannot read " + Quote(def->template_file),
                "a readable .xlsx path (relative paths start at the working directory)");
    return;
  }
  constexpr size_t kMaxTemplateBytes = 10u << 20;
  auto bytes = std::make_shared<std::string>();
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (bytes->size() > kMaxTemplateBytes) {
    errors->Add(where, Quote(def->template_file) + " is larger than 10 MiB", "a smaller template");
    return;
  }
  if (!inspect_template) {
    errors->Add(where, Quote(def->template_file) + " cannot be checked: no template reader");
    return;
  }
  StatusOr<TemplateInfo> info = inspect_template(*bytes);
  if (!info.ok()) {
    errors->Add(where, Quote(def->template_file) + ": " + info.status().message(),
                "an .xlsx with one row of {.column} markers and {name} single values");
    return;
  }
  std::set<std::string> known(info->builtins.begin(), info->builtins.end());
  for (const ParameterSpec& p : def->parameters) known.insert(p.name);
  for (const std::string& name : info->single_values) {
    if (known.count(name) == 0) {
      errors->Add(where,
                  Quote(def->template_file) + " uses {" + name +
                      "}, which is neither a declared parameter nor a built-in",
                  Keys(known));
    }
  }
  def->template_bytes = std::move(bytes);
}

void CheckDefinition(const ExportDefinition& def, const std::string& path, bool has_permission,
                     bool has_consistency, const Context& ctx) {
  ErrorList* errors = ctx.errors;
  if (def.title.empty() || HasControlChar(def.title) ||
      utf8::CountCodePoints(def.title) > kMaxTitleChars) {
    errors->Add(path + ".title", "must be 1..100 characters without control characters",
                "a short human title");
  }
  if (def.service.empty()) {
    errors->Add(path + ".provider-service", "is required", Keys(ctx.services));
  } else if (ctx.services.count(def.service) == 0) {
    errors->Add(path + ".provider-service", Quote(def.service) + " is not in provider-services",
                Keys(ctx.services));
  }
  CheckSource(def, path, has_consistency, ctx.datasources, errors);
  if (!has_permission || def.required_permission.empty()) {
    errors->Add(path + ".required-permission", "is required", kPermissionPattern);
  } else if (!Matches(def.required_permission, kPermissionPattern)) {
    errors->Add(path + ".required-permission",
                Quote(def.required_permission) + " is not a valid permission", kPermissionPattern);
  }
  CheckFileNamePattern(def.file_name_pattern, path + ".file-name-pattern", errors);
  if (def.file_password == FilePasswordRule::kNone) {
    for (const task::ColumnRule& rule : def.column_rules) {
      if (!rule.require_file_password) continue;
      errors->Add(path + ".columns." + rule.key + ".require-file-password",
                  "needs a type that takes a file password, but file-password is none",
                  "file-password: optional or required on " + def.name);
    }
  }
  cctz::time_zone tz;
  if (!cctz::load_time_zone(def.timezone, &tz)) {
    errors->Add(path + ".timezone", Quote(def.timezone) + " is not a known time zone",
                "an IANA name such as Asia/Shanghai or UTC");
  }
}

std::optional<ExportDefinition> ParseDefinition(const std::string& name, const YAML::Node& node,
                                                const Context& ctx) {
  std::string path = JoinPath("definitions", name);
  if (!Matches(name, kTypePattern)) {
    ctx.errors->Add(path, "invalid export type name", kTypePattern);
  }
  ExportDefinition def;
  def.name = name;
  def.title = name;
  MapReader r(node, path, ctx.errors);
  bool has_consistency = false;
  bool has_permission = false;
  ReadDefinitionFields(r, &def, &has_consistency, &has_permission);
  ReadLanguageFields(r, path, &def, ctx.errors);
  ParseParameters(r.Get("parameters"), path + ".parameters", &def, ctx.errors);
  ParseColumnRules(r.Get("columns"), path + ".columns", &def, ctx.errors);
  r.Finish();
  if (!r.valid()) return std::nullopt;
  CheckDefinition(def, path, has_permission, has_consistency, ctx);
  CheckFiles(&def, path, ctx.inspect_template, ctx.errors);
  return def;
}

StatusOr<RegistrySnapshot> ParseRegistryNode(const YAML::Node& root,
                                             const TemplateInspector& inspect_template) {
  ErrorList errors;
  RegistrySnapshot snapshot;
  try {
    MapReader top(root, "", &errors);
    // Other top-level keys belong to ParseConfig, which rejects unknown ones.
    snapshot.services = ParseServices(top.Get("provider-services"), &errors);
    std::set<std::string> datasources = DatasourceNames(top.Get("datasources"));
    Context ctx{snapshot.services, datasources, inspect_template, &errors};
    MapReader definitions(top.Get("definitions"), "definitions", &errors);
    for (const auto& [name, node] : definitions.entries()) {
      std::optional<ExportDefinition> def = ParseDefinition(name, node, ctx);
      if (def) snapshot.definitions[name] = std::move(*def);
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("cannot read the export-type registry: ") + e.what());
  }
  if (!errors.empty()) {
    size_t n = errors.lines().size();
    return InvalidArgument("invalid export-type registry (" + std::to_string(n) +
                           (n == 1 ? " problem):\n" : " problems):\n") +
                           errors.ToStatus().message());
  }
  return snapshot;
}

}  // namespace

StatusOr<RegistrySnapshot> ParseRegistry(std::string_view yaml,
                                         const TemplateInspector& inspect_template) {
  EC_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml, "(inline)"));
  return ParseRegistryNode(root, inspect_template);
}

StatusOr<RegistrySnapshot> LoadRegistry(const std::string& path,
                                        const TemplateInspector& inspect_template) {
  EC_ASSIGN_OR_RETURN(YAML::Node root, LoadYamlFile(path));
  return ParseRegistryNode(root, inspect_template);
}

StatusOr<RegistrySnapshot> LoadRegistryForReload(const std::string& path,
                                                 const TemplateInspector& inspect_template) {
  EC_ASSIGN_OR_RETURN(YAML::Node root, LoadYamlFile(path));
  StatusOr<AppConfig> app = ParseConfigNode(root, path);
  StatusOr<RegistrySnapshot> next = ParseRegistryNode(root, inspect_template);
  if (!app.ok() || !next.ok()) {
    return registry::ReloadRefused(
        path, {app.ok() ? Status::Ok() : app.status(), next.ok() ? Status::Ok() : next.status()});
  }
  return next;
}

}  // namespace export_center::config
