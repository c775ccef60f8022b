#pragma once
// The node tree of a template (MyBatis's SqlNode classes, built as its
// XMLScriptBuilder does): a <script> document or one text node, the
// open...close token parser both `${}` and `#{}` use, and the error the tree
// walks throw. Internal to sql_template/.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace export_center::sql_template::internal {

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
                        const TokenHandler& handler);

// Whether `text` holds a `${...}` token.
bool HasDollarToken(std::string_view text);

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
// A template's node tree: a <script> document or one text node.
struct ParsedTemplate {
  std::unique_ptr<SqlNode> root;
  bool script = false;
};
// Throws TemplateError.
ParsedTemplate ParseTemplate(std::string_view text);

// "line L, column C" of a byte offset into the template (columns count
// characters, as an editor shows them).
std::string Position(std::string_view text, size_t offset);

}  // namespace export_center::sql_template::internal
