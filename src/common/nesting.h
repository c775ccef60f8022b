#pragma once
// How deep outside data may nest: the one bound every reader of foreign bytes
// applies before any recursive code sees them (docs/fuzzing.md#nesting).
//
// JSON (nlohmann, simdjson), XML (pugixml) and the OGNL parser build their
// trees without recursion, but much of what then reads a tree recurses once
// per level: nlohmann's dump() and comparison, a conversion from simdjson, a
// template's node walk, an expression's evaluation. A value nested 500 000
// deep overflows any thread's stack there, and a stack overflow is a SIGSEGV
// no thread guard can catch. So each reader refuses nesting past kMaxNesting
// while it reads — before a tree exists (JSON text: CheckJsonNesting; the
// provider route's simdjson parser has kMaxNesting as its own max depth) or
// before anything walks it (a parsed XML tree: CheckTreeNesting; a parser of
// its own: a NestingGuard per level) — with InvalidArgument, the ordinary
// failure of that path. Every tree the center builds from foreign bytes is
// then at most kMaxNesting deep, so every later walk of it is bounded too.
//
// The templates take the JSON library's or the XML library's type from the
// caller's own include, so common/ links neither (as DumpTolerant).

#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center {

// The deepest nesting any reader of outside data accepts. The deepest real
// document is a provider batch: envelope › data › rows › row › cell (5), or a
// cell holding the task parameters (2 more); a MyBatis template's tags and
// OGNL's parentheses nest a handful deep. 64 leaves ample room above that and
// costs at most some tens of KiB of stack in the deepest walk
// (docs/fuzzing.md#nesting); the API's request bodies keep a tighter 32.
inline constexpr int kMaxNesting = 64;

// InvalidArgument("<what> nested deeper than <max_depth> levels"): the one
// refusal every reader gives.
Status NestingTooDeep(std::string_view what, int max_depth);

// OK unless an array or object in the JSON `text` opens more than max_depth
// levels deep; then NestingTooDeep("JSON", max_depth). One linear pass
// without recursion or allocation that honours strings and escapes and judges
// nothing else: a malformed text is left to the parser (on any prefix the
// parser accepts, this counts exactly its nesting). Thread-safe.
Status CheckJsonNesting(std::string_view text, int max_depth = kMaxNesting);

// Parses JSON text with nlohmann's non-throwing parse after CheckJsonNesting:
// the nesting refusal as an error, otherwise the parsed value — discarded
// (is_discarded()) when the text is not JSON, so each caller keeps its own
// words for that. Json is any nlohmann::basic_json (json, ordered_json).
template <class Json>
StatusOr<Json> ParseJsonWithin(std::string_view text, int max_depth = kMaxNesting) {
  EC_RETURN_IF_ERROR(CheckJsonNesting(text, max_depth));
  return Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

// OK unless a node below `root` of a parsed tree sits more than max_depth
// levels deep (root's children are level 1); then NestingTooDeep(what,
// max_depth). Walks without recursion. Node is any type with first_child(),
// next_sibling(), parent(), == and a false null value: pugi::xml_node (pass
// a document as doc.root()).
template <class Node>
Status CheckTreeNesting(const Node& root, std::string_view what, int max_depth = kMaxNesting) {
  int depth = 1;
  Node node = root.first_child();
  while (node) {
    if (depth > max_depth) return NestingTooDeep(what, max_depth);
    if (Node child = node.first_child()) {
      node = child;
      ++depth;
      continue;
    }
    while (!node.next_sibling()) {
      node = node.parent();
      --depth;
      if (!node || node == root) return Status::Ok();
    }
    node = node.next_sibling();
  }
  return Status::Ok();
}

// For a recursive-descent parser: one per level entered, refused past
// max_depth. The count lives with the parser (`*depth`); the guard leaves
// its level on destruction, even when the parser unwinds with an exception.
//
//   NestingGuard level(&depth_);
//   if (!level.ok()) throw SyntaxError{pos, level.Refusal("expression").message()};
class NestingGuard {
 public:
  explicit NestingGuard(int* depth, int max_depth = kMaxNesting)
      : depth_(depth), max_depth_(max_depth) {
    ++*depth_;
  }
  ~NestingGuard() { --*depth_; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;

  bool ok() const { return *depth_ <= max_depth_; }
  Status Refusal(std::string_view what) const { return NestingTooDeep(what, max_depth_); }

 private:
  int* depth_;
  int max_depth_;
};

}  // namespace export_center
