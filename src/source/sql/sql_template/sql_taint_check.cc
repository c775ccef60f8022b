// The `${}` rule of sql_taint_check.h. A static walk over every branch, so
// the verdict does not depend on which filters a user happened to fill in;
// it follows untrusted values through <bind> and <foreach> the way the
// renderer's scopes do (a <foreach> body gets its own).
#include "source/sql/sql_template/sql_taint_check.h"

#include <map>
#include <memory>

#include "source/sql/sql_template/ognl_expression.h"
#include "source/sql/sql_template/ognl_value.h"

namespace export_center::sql_template::internal {
namespace {

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

}  // namespace

// Throws TemplateError.
std::optional<UnsafeDollar> FindUnsafe(const SqlNode& root, std::string_view text,
                                       const std::set<std::string>& untrusted) {
  std::optional<UnsafeAt> found = TaintChecker(untrusted).Check(root);
  if (!found) return std::nullopt;
  found->dollar.position = Position(text, found->offset);
  return found->dollar;
}

}  // namespace export_center::sql_template::internal
