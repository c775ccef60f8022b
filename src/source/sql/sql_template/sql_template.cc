#include "source/sql/sql_template/sql_template.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <pugixml.hpp>
#include <unordered_map>

#include "common/ascii.h"
#include "common/json_dump.h"
#include "common/nesting.h"
#include "common/utf8.h"
#include "source/sql/sql_template/ognl_expression.h"
#include "source/sql/sql_template/ognl_value.h"
#include "source/sql/sql_template/sql_node.h"
#include "source/sql/sql_template/sql_taint_check.h"

namespace export_center::sql_template {
namespace {

using internal::FindUnsafe;
using internal::ParsedTemplate;
using internal::ParseTemplate;
using internal::ParseTokens;
using internal::Position;
using internal::SqlNode;
using internal::TemplateError;

// ---------------------------------------------------------------------------
// Where SQL goes while nodes apply (MyBatis's DynamicContext family).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void Append(const std::string& sql) = 0;
};

// DynamicContext: fragments joined by one space (a StringJoiner(" ")).
class JoinSink : public Sink {
 public:
  void Append(const std::string& sql) override {
    if (any_) out_ += ' ';
    out_ += sql;
    any_ = true;
  }
  const std::string& sql() const { return out_; }

 private:
  std::string out_;
  bool any_ = false;
};

// TrimSqlNode's FilteredDynamicContext: one space between fragments, as in
// the current MyBatis (3.5 concatenated them, so `1</if><if>and` became
// `1and`).
class BufferSink : public Sink {
 public:
  void Append(const std::string& sql) override {
    if (!buf_.empty()) buf_ += ' ';
    buf_ += sql;
  }
  const std::string& buffer() const { return buf_; }

 private:
  std::string buf_;
};

// ForEachSqlNode's PrefixedContext: writes the separator before the first
// non-blank fragment of an iteration, so empty iterations add none.
class PrefixedSink : public Sink {
 public:
  PrefixedSink(Sink& delegate, std::string prefix)
      : delegate_(delegate), prefix_(std::move(prefix)) {}
  void Append(const std::string& sql) override {
    if (!applied_ && !JavaTrim(sql).empty()) {
      delegate_.Append(prefix_);
      applied_ = true;
    }
    delegate_.Append(sql);
  }
  bool applied() const { return applied_; }

 private:
  Sink& delegate_;
  std::string prefix_;
  bool applied_ = false;
};

// Bindings visible to expressions: <bind> names, foreach item/index,
// _parameter. Each foreach iteration gets a child scope, so its item, index
// and <bind>s are local to that iteration.
class Scope {
 public:
  explicit Scope(const Scope* parent) : parent_(parent) {}
  const Value* Find(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent_) {
      auto it = s->vars_.find(name);
      if (it != s->vars_.end()) return &it->second;
    }
    return nullptr;
  }
  void Bind(const std::string& name, Value v) { vars_[name] = std::move(v); }

 private:
  const Scope* parent_;
  std::unordered_map<std::string, Value> vars_;
};

// How a name missing from the bindings resolves against the parameter
// object: a map by key, a list/array as MyBatis's ParamMap {collection,
// list}, a single scalar as itself (it has a type handler), null as null.
class Params {
 public:
  explicit Params(const Json& json) : json_(json) {}
  Value Lookup(const std::string& name, size_t at) const {
    if (json_.is_object()) {
      auto it = json_.find(name);
      return it == json_.end() ? Value::Null() : Value::FromJson(*it);
    }
    if (json_.is_null()) return Value::Null();
    if (json_.is_array()) {
      if (name == "collection" || name == "list") return Value::FromJson(json_);
      throw TemplateError{
          at, "Parameter '" + name + "' not found. Available parameters are [collection, list]"};
    }
    return Value::FromJson(json_);
  }
  const Json& json() const { return json_; }

 private:
  const Json& json_;
};

class ScopeResolver : public RootResolver {
 public:
  ScopeResolver(const Scope& scope, const Params& params, size_t at)
      : scope_(scope), params_(params), at_(at) {}
  StatusOr<Value> Lookup(const std::string& name) const override {
    if (const Value* v = scope_.Find(name)) return *v;
    try {
      return params_.Lookup(name, at_);
    } catch (const TemplateError& e) {
      return InvalidArgument(e.message);
    }
  }

 private:
  const Scope& scope_;
  const Params& params_;
  size_t at_;
};

// ---------------------------------------------------------------------------
// #{...}: ParameterExpression parsing and MetaObject-style property paths.
const char* const kJdbcTypes[] = {"ARRAY",
                                  "BIT",
                                  "TINYINT",
                                  "SMALLINT",
                                  "INTEGER",
                                  "BIGINT",
                                  "FLOAT",
                                  "REAL",
                                  "DOUBLE",
                                  "NUMERIC",
                                  "DECIMAL",
                                  "CHAR",
                                  "VARCHAR",
                                  "LONGVARCHAR",
                                  "DATE",
                                  "TIME",
                                  "TIMESTAMP",
                                  "BINARY",
                                  "VARBINARY",
                                  "LONGVARBINARY",
                                  "NULL",
                                  "OTHER",
                                  "BLOB",
                                  "CLOB",
                                  "BOOLEAN",
                                  "CURSOR",
                                  "UNDEFINED",
                                  "NVARCHAR",
                                  "NCHAR",
                                  "NCLOB",
                                  "STRUCT",
                                  "JAVA_OBJECT",
                                  "DISTINCT",
                                  "REF",
                                  "DATALINK",
                                  "ROWID",
                                  "LONGNVARCHAR",
                                  "SQLXML",
                                  "DATETIMEOFFSET",
                                  "TIME_WITH_TIMEZONE",
                                  "TIMESTAMP_WITH_TIMEZONE"};

void CheckJdbcType(const std::string& type, const std::string& content, size_t at) {
  for (const char* t : kJdbcTypes) {
    if (type == t) return;
  }
  throw TemplateError{at, "unknown jdbcType '" + type + "' in #{" + content + "}"};
}

void CheckOption(const std::string& name, const std::string& value, const std::string& content,
                 size_t at) {
  if (name == "jdbcType") {
    CheckJdbcType(value, content, at);
  } else if (name == "mode") {
    if (value != "IN" && value != "OUT" && value != "INOUT") {
      throw TemplateError{at, "unknown mode '" + value + "' in #{" + content + "}"};
    }
  } else if (name == "expression") {
    throw TemplateError{at, "Expression based parameters are not supported yet"};
  } else if (name != "javaType" && name != "numericScale" && name != "resultMap" &&
             name != "typeHandler" && name != "jdbcTypeName" && name != "property") {
    throw TemplateError{at, "An invalid property '" + name + "' was found in mapping #{" + content +
                                "}.  Valid properties are javaType,jdbcType,mode,numericScale,"
                                "resultMap,typeHandler,jdbcTypeName"};
  }
}

// Returns the property of `#{content}` after checking its options.
std::string ParameterProperty(const std::string& content, size_t at) {
  auto skip_ws = [&](size_t p) {
    while (p < content.size() && static_cast<unsigned char>(content[p]) <= 0x20) ++p;
    return p;
  };
  auto until = [&](size_t p, const char* stops) {
    size_t e = content.find_first_of(stops, p);
    return e == std::string::npos ? content.size() : e;
  };
  size_t p = skip_ws(0);
  if (p >= content.size()) throw TemplateError{at, "empty parameter reference #{}"};
  if (content[p] == '(')
    throw TemplateError{at, "Expression based parameters are not supported yet"};
  size_t right = until(p, ",:");
  std::string property(JavaTrim(std::string_view(content).substr(p, right - p)));
  p = skip_ws(right);
  if (p < content.size() && content[p] == ':') {
    size_t e = until(p + 1, ",");
    CheckJdbcType(std::string(JavaTrim(std::string_view(content).substr(p + 1, e - p - 1))),
                  content, at);
    p = e;
  } else if (p < content.size() && content[p] != ',') {
    throw TemplateError{at, "Parsing error in {" + content + "} in position " + std::to_string(p)};
  }
  while (p < content.size()) {  // ",name=value" options
    size_t left = skip_ws(p + 1);
    if (left >= content.size()) break;
    size_t eq = until(left, "=");
    std::string name(JavaTrim(std::string_view(content).substr(left, eq - left)));
    size_t end = eq < content.size() ? until(eq + 1, ",") : eq;
    std::string value =
        eq < content.size()
            ? std::string(JavaTrim(std::string_view(content).substr(eq + 1, end - eq - 1)))
            : "";
    CheckOption(name, value, content, at);
    p = end;
  }
  return property;
}

// One step of a MetaObject path: `name` or `name[index]` on `base`.
struct PathStep {
  std::string name;
  std::optional<std::string> index;
};

PathStep SplitStep(const std::string& segment) {
  PathStep step{segment, std::nullopt};
  size_t b = segment.find('[');
  if (b != std::string::npos) {
    step.index = segment.substr(b + 1, segment.size() - b - 2);
    step.name = segment.substr(0, b);
  }
  return step;
}

Value IndexInto(const Value& collection, const PathStep& step, size_t at) {
  if (collection.kind() == Value::Kind::kMap) return collection.Get(*step.index);
  if (collection.kind() == Value::Kind::kList) {
    int64_t i = 0;
    auto res = std::from_chars(step.index->data(), step.index->data() + step.index->size(), i);
    if (res.ec != std::errc() || res.ptr != step.index->data() + step.index->size()) {
      throw TemplateError{at, "NumberFormatException: For input string: \"" + *step.index + "\""};
    }
    if (i < 0 || static_cast<size_t>(i) >= collection.Size()) {
      throw TemplateError{at, "index " + *step.index + " out of range for '" + step.name + "'"};
    }
    return collection.Element(static_cast<size_t>(i));
  }
  throw TemplateError{at, "The '" + step.name + "' property of " + collection.ToJavaString() +
                              " is not a List or Array."};
}

Value ChildOf(const Value& base, const PathStep& step, size_t at) {
  if (base.kind() != Value::Kind::kMap) {
    throw TemplateError{at, "There is no getter for property named '" + step.name + "' in '" +
                                base.JavaClassName() + "'"};
  }
  Value v = base.Get(step.name);
  return step.index ? IndexInto(v, step, at) : v;
}

// ---------------------------------------------------------------------------
class Renderer {
 public:
  Renderer(const Params& params, std::vector<nlohmann::json>& bindings)
      : params_(params), bindings_(bindings) {}

  void Apply(const SqlNode& node, Sink& sink, Scope& scope) {
    switch (node.type) {
      case SqlNode::Type::kMixed:
        for (const auto& child : node.children) Apply(*child, sink, scope);
        return;
      case SqlNode::Type::kText:
        sink.Append(RenderText(node, scope));
        return;
      case SqlNode::Type::kIf:
        ApplyIf(node, sink, scope);
        return;
      case SqlNode::Type::kChoose:
        ApplyChoose(node, sink, scope);
        return;
      case SqlNode::Type::kTrim:
        ApplyTrim(node, sink, scope);
        return;
      case SqlNode::Type::kForEach:
        ApplyForEach(node, sink, scope);
        return;
      case SqlNode::Type::kBind:
        scope.Bind(node.name, Evaluate(node.text, scope, node.offset));
        return;
    }
  }

  // TextSqlNode: ${} substitution first, then #{} to `?` with its value.
  std::string RenderText(const SqlNode& node, const Scope& scope) {
    std::string text = node.text;
    if (node.dynamic) {
      text = ParseTokens(text, "${", "}", [&](const std::string& expr, size_t at) {
        Value v = Evaluate(expr, scope, node.offset + at);
        return v.is_null() ? std::string() : v.ToJavaString();
      });
    }
    return ParseTokens(text, "#{", "}", [&](const std::string& content, size_t) {
      bindings_.push_back(ResolveParameter(content, scope, node.offset).ToBindingJson());
      return std::string("?");
    });
  }

 private:
  Value Evaluate(const std::string& text, const Scope& scope, size_t at) {
    auto& cached = cache_[text];
    if (!cached) {
      auto parsed = Expression::Parse(text);
      if (!parsed.ok()) throw TemplateError{at, parsed.status().message()};
      cached = *parsed;
    }
    auto v = cached->Evaluate(ScopeResolver(scope, params_, at));
    if (!v.ok()) throw TemplateError{at, v.status().message()};
    return *v;
  }

  bool Test(const SqlNode& node, const Scope& scope) {
    return ognl_ops::MyBatisTruthy(Evaluate(node.text, scope, node.offset));
  }

  void ApplyContents(const SqlNode& node, Sink& sink, Scope& scope) {
    for (const auto& child : node.children) Apply(*child, sink, scope);
  }

  void ApplyIf(const SqlNode& node, Sink& sink, Scope& scope) {
    if (Test(node, scope)) ApplyContents(node, sink, scope);
  }

  void ApplyChoose(const SqlNode& node, Sink& sink, Scope& scope) {
    for (const auto& when : node.children) {
      if (Test(*when, scope)) {
        ApplyContents(*when, sink, scope);
        return;
      }
    }
    if (node.otherwise) Apply(*node.otherwise, sink, scope);
  }

  // TrimSqlNode.applyAll: overrides are matched against the upper-cased,
  // trimmed body; only the trimmed override's length is removed, so the
  // space after a stripped AND survives ("WHERE  a = ?").
  void ApplyTrim(const SqlNode& node, Sink& sink, Scope& scope) {
    BufferSink buffer;
    ApplyContents(node, buffer, scope);
    std::string sql(JavaTrim(buffer.buffer()));
    const std::string upper = ToUpperAscii(sql);
    if (!upper.empty()) {
      for (const std::string& o : node.prefix_overrides) {
        if (upper.rfind(o, 0) == 0) {
          sql.erase(0, JavaTrim(o).size());
          break;
        }
      }
      if (node.prefix) sql = *node.prefix + " " + sql;
      for (const std::string& o : node.suffix_overrides) {
        std::string_view t = JavaTrim(o);
        auto ends = [&](std::string_view s) {
          return upper.size() >= s.size() &&
                 upper.compare(upper.size() - s.size(), s.size(), s) == 0;
        };
        if (ends(o) || ends(t)) {
          sql.erase(sql.size() - std::min(sql.size(), t.size()));
          break;
        }
      }
      if (node.suffix) sql += " " + *node.suffix;
    }
    sink.Append(sql);
  }

  void ApplyForEach(const SqlNode& node, Sink& sink, Scope& scope) {
    Value collection = Evaluate(node.text, scope, node.offset);
    std::vector<std::pair<Value, Value>> entries;  // (index, item)
    if (collection.is_null()) {
      if (node.nullable) return;
      throw TemplateError{node.offset,
                          "The expression '" + node.text + "' evaluated to a null value."};
    }
    if (collection.kind() == Value::Kind::kList) {
      int32_t i = 0;
      for (Value& v : collection.Elements()) entries.emplace_back(Value::Int(i++), std::move(v));
    } else if (collection.kind() == Value::Kind::kMap) {
      for (auto& [k, v] : collection.Entries())
        entries.emplace_back(Value::String(k), std::move(v));
    } else {
      throw TemplateError{node.offset, "Error evaluating expression '" + node.text +
                                           "'.  Return value (" + collection.ToJavaString() +
                                           ") was not iterable."};
    }
    if (entries.empty()) return;
    if (node.open) sink.Append(*node.open);
    bool first = true;
    for (auto& [index, item] : entries) {
      PrefixedSink prefixed(sink, (first || !node.separator) ? "" : *node.separator);
      Scope local(&scope);
      if (node.index) local.Bind(*node.index, index);
      if (node.item) local.Bind(*node.item, item);
      ApplyContents(node, prefixed, local);
      if (first) first = !prefixed.applied();
    }
    if (node.close) sink.Append(*node.close);
  }

  // The value MyBatis binds for #{property}: the bindings when they hold the
  // first path segment, else the parameter object; null along the path is
  // null, a property of a non-map is an error.
  Value ResolveParameter(const std::string& content, const Scope& scope, size_t at) {
    std::string property = ParameterProperty(content, at);
    std::vector<PathStep> steps;
    size_t b = 0;
    while (true) {
      size_t dot = property.find('.', b);
      steps.push_back(
          SplitStep(property.substr(b, dot == std::string::npos ? std::string::npos : dot - b)));
      if (dot == std::string::npos) break;
      b = dot + 1;
    }
    Value v;
    const PathStep& head = steps[0];
    if (const Value* bound = scope.Find(head.name)) {
      v = head.index ? IndexInto(*bound, head, at) : *bound;
    } else if (params_.json().is_object() || params_.json().is_array()) {
      v = params_.Lookup(head.name, at);
      if (head.index) v = IndexInto(v, head, at);
    } else {
      return params_.json().is_null() ? Value::Null() : Value::FromJson(params_.json());
    }
    for (size_t i = 1; i < steps.size(); ++i) {
      if (v.is_null()) return v;
      v = ChildOf(v, steps[i], at);
    }
    return v;
  }

  const Params& params_;
  std::vector<nlohmann::json>& bindings_;
  std::unordered_map<std::string, std::shared_ptr<const Expression>> cache_;
};

StatusOr<RenderedSql> Render(std::string_view text, const Json& params_json,
                             const RenderOptions& options) {
  RenderedSql out;
  Params params(params_json);
  Renderer renderer(params, out.bindings);
  Scope root(nullptr);
  root.Bind("_parameter", Value::FromJson(params_json));
  root.Bind("_databaseId", Value::Null());
  try {
    ParsedTemplate parsed = ParseTemplate(text);
    if (!options.untrusted.empty()) {
      if (auto unsafe = FindUnsafe(*parsed.root, text, options.untrusted)) {
        return InvalidArgument(unsafe->Message());
      }
    }
    if (parsed.script) {
      JoinSink sink;
      renderer.Apply(*parsed.root, sink, root);
      out.sql = std::string(JavaTrim(sink.sql()));
      return out;
    }
    std::string sql = renderer.RenderText(*parsed.root, root);
    // A static plain-text template becomes a RawSqlSource, which keeps its
    // text as is; a dynamic one goes through DynamicContext, which trims.
    out.sql = parsed.root->dynamic ? std::string(JavaTrim(sql)) : sql;
    return out;
  } catch (const TemplateError& e) {
    return InvalidArgument(Position(text, e.offset) + ": " + e.message);
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("template rendering failed: ") + e.what());
  }
}

}  // namespace

std::string UnsafeDollar::Message() const {
  std::string through = via.empty() ? "" : " through '" + via + "'";
  return position + ": " + expression + " reads the untrusted parameter '" + parameter + "'" +
         through +
         "; ${} puts its text into the SQL unescaped, so it may read only server-bound, "
         "allowed-list or numeric values: bind a user-typed value with #{} instead";
}

StatusOr<std::optional<UnsafeDollar>> FindUnsafeDollar(std::string_view template_text,
                                                       const std::set<std::string>& untrusted) {
  try {
    return FindUnsafe(*ParseTemplate(template_text).root, template_text, untrusted);
  } catch (const TemplateError& e) {
    return InvalidArgument(Position(template_text, e.offset) + ": " + e.message);
  }
}

StatusOr<RenderedSql> RenderTemplate(std::string_view template_text,
                                     const nlohmann::ordered_json& params,
                                     const RenderOptions& options) {
  return Render(template_text, params, options);
}

StatusOr<RenderedSql> RenderTemplate(std::string_view template_text, const nlohmann::json& params,
                                     const RenderOptions& options) {
  return Render(template_text, Json::parse(DumpTolerant(params)), options);
}

}  // namespace export_center::sql_template
