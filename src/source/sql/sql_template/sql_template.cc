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

namespace export_center::sql_template {
namespace {

// Thrown while building or applying the node tree, caught in RenderTemplate.
// The tree walk is deeply recursive; one catch at the edge keeps each node's
// code about SQL rather than about error plumbing.
struct TemplateError {
  size_t offset;
  std::string message;
};

// ---------------------------------------------------------------------------
// MyBatis's GenericTokenParser: finds open...close tokens, honours a
// backslash before the open token (kept literally, backslash dropped) and
// before a close token inside an expression; an unclosed token stays text.
using TokenHandler = std::function<std::string(const std::string& content, size_t at)>;

std::string ParseTokens(std::string_view text, std::string_view open, std::string_view close,
                        const TokenHandler& handler) {
  size_t start = text.find(open);
  if (start == std::string_view::npos) return std::string(text);
  std::string out;
  size_t offset = 0;
  while (start != std::string_view::npos) {
    if (start > 0 && text[start - 1] == '\\') {
      out.append(text.substr(offset, start - offset - 1)).append(open);
      offset = start + open.size();
    } else {
      std::string expression;
      out.append(text.substr(offset, start - offset));
      offset = start + open.size();
      size_t end = text.find(close, offset);
      while (end != std::string_view::npos) {
        if (end > offset && text[end - 1] == '\\') {
          expression.append(text.substr(offset, end - offset - 1)).append(close);
          offset = end + close.size();
          end = text.find(close, offset);
        } else {
          expression.append(text.substr(offset, end - offset));
          break;
        }
      }
      if (end == std::string_view::npos) {
        out.append(text.substr(start));
        offset = text.size();
      } else {
        out.append(handler(expression, start));
        offset = end + close.size();
      }
    }
    start = text.find(open, offset);
  }
  if (offset < text.size()) out.append(text.substr(offset));
  return out;
}

bool HasDollarToken(std::string_view text) {
  bool found = false;
  ParseTokens(text, "${", "}", [&](const std::string&, size_t) {
    found = true;
    return std::string();
  });
  return found;
}

// ---------------------------------------------------------------------------
// The node tree (MyBatis's SqlNode classes).
struct SqlNode {
  enum class Type { kMixed, kText, kIf, kChoose, kTrim, kForEach, kBind };
  Type type = Type::kMixed;
  size_t offset = 0;
  std::vector<std::unique_ptr<SqlNode>> children;  // contents (kChoose: the whens)
  std::unique_ptr<SqlNode> otherwise;              // kChoose
  std::string text;                                // kText; kIf test; kBind value; collection
  bool dynamic = false;                            // kText holds ${...}
  std::optional<std::string> prefix, suffix;       // kTrim
  std::vector<std::string> prefix_overrides, suffix_overrides;
  std::optional<std::string> item, index, open, close, separator;  // kForEach
  bool nullable = false;
  std::string name;  // kBind
};

std::unique_ptr<SqlNode> TextNode(std::string text, size_t offset) {
  auto n = std::make_unique<SqlNode>();
  n->type = SqlNode::Type::kText;
  n->offset = offset;
  // MyBatis first runs PropertyParser (configuration variables) over each
  // body, which also consumes \${ and \} escapes; with no variables here we
  // skip it so escapes behave as in TextSqlNode (DynamicSqlSourceTest).
  n->text = std::move(text);
  n->dynamic = HasDollarToken(n->text);
  return n;
}

// TrimSqlNode.parseOverrides: '|'-separated, empty tokens skipped, upper-cased.
std::vector<std::string> ParseOverrides(const std::optional<std::string>& spec) {
  std::vector<std::string> out;
  if (!spec) return out;
  size_t b = 0;
  while (b <= spec->size()) {
    size_t e = spec->find('|', b);
    if (e == std::string::npos) e = spec->size();
    std::string token = ToUpperAscii(spec->substr(b, e - b));
    if (!token.empty()) out.push_back(token);
    b = e + 1;
  }
  return out;
}

class TreeBuilder {
 public:
  explicit TreeBuilder(size_t base) : base_(base) {}

  std::unique_ptr<SqlNode> Contents(const pugi::xml_node& parent) {
    auto mixed = std::make_unique<SqlNode>();
    mixed->offset = Offset(parent);
    // MyBatis reads mappers with a DOM parser that drops comments, so the text
    // on both sides of a comment is one text node there (one fragment, no
    // joining space); a CDATA section stays a node of its own.
    std::string text;
    size_t text_offset = 0;
    bool pending = false;
    auto flush = [&] {
      if (pending) mixed->children.push_back(TextNode(text, text_offset));
      text.clear();
      pending = false;
    };
    for (pugi::xml_node child : parent.children()) {
      if (child.type() == pugi::node_pcdata) {
        if (!pending) text_offset = Offset(child);
        text += child.value();
        pending = true;
      } else if (child.type() == pugi::node_cdata) {
        flush();
        mixed->children.push_back(TextNode(child.value(), Offset(child)));
      } else if (child.type() == pugi::node_element) {
        flush();
        mixed->children.push_back(Element(child));
      }
    }
    flush();
    return mixed;
  }

 private:
  size_t Offset(const pugi::xml_node& n) const {
    ptrdiff_t off = n.offset_debug();
    return off < 0 ? base_ : base_ + static_cast<size_t>(off);
  }

  static std::optional<std::string> Attr(const pugi::xml_node& n, const char* name) {
    pugi::xml_attribute a = n.attribute(name);
    if (!a) return std::nullopt;
    return std::string(a.value());
  }

  std::string Required(const pugi::xml_node& n, const char* name) {
    auto v = Attr(n, name);
    if (!v) {
      throw TemplateError{Offset(n),
                          std::string("<") + n.name() + "> requires the '" + name + "' attribute"};
    }
    return *v;
  }

  std::unique_ptr<SqlNode> Element(const pugi::xml_node& n) {
    std::string tag = n.name();
    if (tag == "if" || tag == "when") return If(n);
    if (tag == "otherwise") return Contents(n);  // MyBatis allows it anywhere
    if (tag == "choose") return Choose(n);
    if (tag == "trim") {
      return Trim(n, Attr(n, "prefix"), ParseOverrides(Attr(n, "prefixOverrides")),
                  Attr(n, "suffix"), ParseOverrides(Attr(n, "suffixOverrides")));
    }
    if (tag == "where") {
      return Trim(n, "WHERE", {"AND ", "OR ", "AND\n", "OR\n", "AND\r", "OR\r", "AND\t", "OR\t"},
                  std::nullopt, {});
    }
    if (tag == "set") return Trim(n, "SET", {","}, std::nullopt, {","});
    if (tag == "foreach") return ForEach(n);
    if (tag == "bind") return Bind(n);
    throw TemplateError{Offset(n), "Unknown element <" + tag + "> in SQL statement."};
  }

  std::unique_ptr<SqlNode> If(const pugi::xml_node& n) {
    auto node = Contents(n);
    node->type = SqlNode::Type::kIf;
    node->text = Required(n, "test");
    return node;
  }

  // Only element children count (text between them is dropped); anything
  // but if/when/otherwise is an error, as in the current MyBatis's
  // XMLScriptBuilder.ChooseHandler (3.5 ignored it, hiding typos such as
  // <otherwize>).
  std::unique_ptr<SqlNode> Choose(const pugi::xml_node& n) {
    auto node = std::make_unique<SqlNode>();
    node->type = SqlNode::Type::kChoose;
    node->offset = Offset(n);
    for (pugi::xml_node child : n.children()) {
      if (child.type() != pugi::node_element) continue;
      std::string tag = child.name();
      if (tag == "when" || tag == "if") {
        node->children.push_back(If(child));
      } else if (tag == "otherwise") {
        if (node->otherwise) {
          throw TemplateError{Offset(child),
                              "Too many default (otherwise) elements in choose statement."};
        }
        node->otherwise = Contents(child);
      } else {
        throw TemplateError{Offset(child), "Unknown element <" + tag + "> in SQL statement."};
      }
    }
    return node;
  }

  std::unique_ptr<SqlNode> Trim(const pugi::xml_node& n, std::optional<std::string> prefix,
                                std::vector<std::string> prefix_overrides,
                                std::optional<std::string> suffix,
                                std::vector<std::string> suffix_overrides) {
    auto node = Contents(n);
    node->type = SqlNode::Type::kTrim;
    node->prefix = std::move(prefix);
    node->suffix = std::move(suffix);
    node->prefix_overrides = std::move(prefix_overrides);
    node->suffix_overrides = std::move(suffix_overrides);
    return node;
  }

  std::unique_ptr<SqlNode> ForEach(const pugi::xml_node& n) {
    auto node = Contents(n);
    node->type = SqlNode::Type::kForEach;
    node->text = Required(n, "collection");
    node->item = Attr(n, "item");
    node->index = Attr(n, "index");
    node->open = Attr(n, "open");
    node->close = Attr(n, "close");
    node->separator = Attr(n, "separator");
    auto nullable = Attr(n, "nullable");
    node->nullable =
        nullable && (*nullable == "true" || *nullable == "TRUE" || *nullable == "True");
    return node;
  }

  std::unique_ptr<SqlNode> Bind(const pugi::xml_node& n) {
    auto node = std::make_unique<SqlNode>();
    node->type = SqlNode::Type::kBind;
    node->offset = Offset(n);
    node->name = Required(n, "name");
    node->text = Required(n, "value");
    return node;
  }

  size_t base_;
};

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

// ---------------------------------------------------------------------------
// The `${}` rule (docs/sql-template.md#what--may-read). A static walk over
// every branch, so the verdict does not depend on which filters a user
// happened to fill in; it follows untrusted values through <bind> and
// <foreach> the way the renderer's scopes do (a <foreach> body gets its own).

// Where a value came from: the untrusted parameter, and the bound name a
// `${}` reads it through ("" when it reads the parameter itself).
struct Taint {
  std::string parameter;
  std::string via;
};

// <bind> and <foreach> names → the untrusted parameter each derives from
// ("" for a trusted value).
class TaintScope {
 public:
  explicit TaintScope(const TaintScope* parent) : parent_(parent) {}
  const std::string* Find(const std::string& name) const {
    for (const TaintScope* s = this; s != nullptr; s = s->parent_) {
      auto it = s->vars_.find(name);
      if (it != s->vars_.end()) return &it->second;
    }
    return nullptr;
  }
  void Bind(const std::string& name, std::string parameter) { vars_[name] = std::move(parameter); }

 private:
  const TaintScope* parent_;
  std::unordered_map<std::string, std::string> vars_;
};

struct UnsafeAt {
  size_t offset;
  UnsafeDollar dollar;  // without its position
};

class TaintChecker {
 public:
  explicit TaintChecker(const std::set<std::string>& untrusted) : untrusted_(untrusted) {}

  // Throws TemplateError for an expression that does not parse.
  std::optional<UnsafeAt> Check(const SqlNode& root) {
    TaintScope scope(nullptr);
    Walk(root, scope);
    return found_;
  }

 private:
  void Walk(const SqlNode& node, TaintScope& scope) {
    if (found_) return;
    switch (node.type) {
      case SqlNode::Type::kText:
        if (node.dynamic) CheckText(node, scope);
        return;
      case SqlNode::Type::kMixed:
      case SqlNode::Type::kIf:
      case SqlNode::Type::kTrim:
        WalkChildren(node, scope);
        return;
      case SqlNode::Type::kChoose:
        WalkChildren(node, scope);
        if (node.otherwise) Walk(*node.otherwise, scope);
        return;
      case SqlNode::Type::kForEach: {
        // The index of a map is one of its keys, so it is as untrusted as the items.
        std::optional<Taint> collection = Read(node.text, scope, node.offset);
        std::string parameter = collection ? collection->parameter : "";
        TaintScope local(&scope);
        if (node.item) local.Bind(*node.item, parameter);
        if (node.index) local.Bind(*node.index, parameter);
        WalkChildren(node, local);
        return;
      }
      case SqlNode::Type::kBind: {
        std::optional<Taint> value = Read(node.text, scope, node.offset);
        scope.Bind(node.name, value ? value->parameter : "");
        return;
      }
    }
  }

  void WalkChildren(const SqlNode& node, TaintScope& scope) {
    for (const auto& child : node.children) Walk(*child, scope);
  }

  void CheckText(const SqlNode& node, const TaintScope& scope) {
    ParseTokens(node.text, "${", "}", [&](const std::string& expr, size_t at) {
      if (found_) return std::string();
      if (std::optional<Taint> t = Read(expr, scope, node.offset + at)) {
        found_ = UnsafeAt{node.offset + at, {"${" + expr + "}", t->parameter, t->via, ""}};
      }
      return std::string();
    });
  }

  // The first untrusted value `text` reads, if any.
  std::optional<Taint> Read(const std::string& text, const TaintScope& scope, size_t at) {
    auto parsed = Expression::Parse(text);
    if (!parsed.ok()) throw TemplateError{at, parsed.status().message()};
    for (const Expression::RootRead& read : (*parsed)->RootReads()) {
      if (std::optional<Taint> t = ReadRoot(read, scope)) return t;
    }
    return std::nullopt;
  }

  std::optional<Taint> ReadRoot(const Expression::RootRead& read, const TaintScope& scope) {
    const std::string* bound = scope.Find(read.name);
    if (bound != nullptr && !bound->empty()) return Taint{*bound, read.name};
    if (read.name == "_parameter") {
      // The whole parameter object holds every untrusted value.
      if (!read.key) {
        if (untrusted_.empty()) return std::nullopt;
        return Taint{*untrusted_.begin(), read.name};
      }
      if (untrusted_.count(*read.key)) return Taint{*read.key, read.name};
      return std::nullopt;
    }
    // Even under a trusted <bind> of the same name: a <bind> in a branch that
    // does not run leaves the parameter visible, and a static walk cannot tell.
    if (untrusted_.count(read.name)) return Taint{read.name, ""};
    return std::nullopt;
  }

  const std::set<std::string>& untrusted_;
  std::optional<UnsafeAt> found_;
};

std::string Position(std::string_view text, size_t offset) {
  const std::string_view before = text.substr(0, std::min(offset, text.size()));
  const size_t newline = before.rfind('\n');
  const std::string_view this_line =
      newline == std::string_view::npos ? before : before.substr(newline + 1);
  // Columns count characters, as an editor shows them, not bytes.
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t column = 1 + utf8::CountCodePoints(this_line);
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::unique_ptr<SqlNode> ParseScript(std::string_view text, size_t base) {
  pugi::xml_document doc;
  unsigned flags = pugi::parse_default | pugi::parse_ws_pcdata | pugi::parse_comments;
  pugi::xml_parse_result result =
      doc.load_buffer(text.data() + base, text.size() - base, flags, pugi::encoding_utf8);
  if (!result) {
    throw TemplateError{base + static_cast<size_t>(result.offset),
                        std::string("malformed XML: ") + result.description()};
  }
  // pugixml reads without recursion, but the tree builder, the renderer, the
  // ${} check and the node tree's destructor recurse once per tag: deeper than
  // kMaxNesting is refused before any of them runs (common/nesting.h).
  if (Status nesting = CheckTreeNesting(doc.root(), "template tags"); !nesting.ok()) {
    throw TemplateError{base, nesting.message()};
  }
  pugi::xml_node script;
  for (pugi::xml_node n : doc.children()) {
    if (n.type() == pugi::node_element) {
      if (script) throw TemplateError{base + n.offset_debug(), "content after </script>"};
      script = n;
    } else if (n.type() == pugi::node_pcdata && !JavaTrim(n.value()).empty()) {
      throw TemplateError{base + n.offset_debug(), "text outside <script>"};
    }
  }
  return TreeBuilder(base).Contents(script);
}

// A template's node tree: a <script> document or one text node.
struct ParsedTemplate {
  std::unique_ptr<SqlNode> root;
  bool script = false;
};

// Throws TemplateError.
ParsedTemplate ParseTemplate(std::string_view text) {
  size_t lead = 0;
  while (lead < text.size() && static_cast<unsigned char>(text[lead]) <= 0x20) ++lead;
  if (text.substr(lead).rfind("<script>", 0) == 0) return {ParseScript(text, lead), true};
  return {TextNode(std::string(text), 0), false};
}

// Throws TemplateError.
std::optional<UnsafeDollar> FindUnsafe(const SqlNode& root, std::string_view text,
                                       const std::set<std::string>& untrusted) {
  std::optional<UnsafeAt> found = TaintChecker(untrusted).Check(root);
  if (!found) return std::nullopt;
  found->dollar.position = Position(text, found->offset);
  return found->dollar;
}

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
