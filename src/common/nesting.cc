#include "common/nesting.h"

#include <cstring>

namespace export_center {

Status NestingTooDeep(std::string_view what, int max_depth) {
  return InvalidArgument(std::string(what) + " nested deeper than " + std::to_string(max_depth) +
                         " levels");
}

Status CheckJsonNesting(std::string_view text, int max_depth) {
  const char* p = text.data();
  const char* const end = p + text.size();
  int depth = 0;
  while (p < end) {
    switch (*p++) {
      case '"':
        // To the closing quote: one preceded by an even run of backslashes.
        while (true) {
          const auto* quote = static_cast<const char*>(std::memchr(p, '"', end - p));
          if (quote == nullptr) return Status::Ok();  // unterminated: the parser refuses it
          const char* run = quote;
          while (run > p && run[-1] == '\\') --run;
          p = quote + 1;
          if ((quote - run) % 2 == 0) break;
        }
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return NestingTooDeep("JSON", max_depth);
        break;
      case ']':
      case '}':
        --depth;  // below zero only in a text the parser refuses at that byte
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

}  // namespace export_center
