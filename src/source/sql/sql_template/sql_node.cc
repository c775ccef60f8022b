// The node tree of sql_node.h: token parsing, the <script> parse and the
// tree builder.
#include "source/sql/sql_template/sql_node.h"

#include <algorithm>
#include <pugixml.hpp>

#include "common/ascii.h"
#include "common/nesting.h"
#include "common/utf8.h"
#include "source/sql/sql_template/ognl_value.h"

namespace export_center::sql_template::internal {

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

namespace {

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

}  // namespace

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

// Throws TemplateError.
ParsedTemplate ParseTemplate(std::string_view text) {
  size_t lead = 0;
  while (lead < text.size() && static_cast<unsigned char>(text[lead]) <= 0x20) ++lead;
  if (text.substr(lead).rfind("<script>", 0) == 0) return {ParseScript(text, lead), true};
  return {TextNode(std::string(text), 0), false};
}

}  // namespace export_center::sql_template::internal
