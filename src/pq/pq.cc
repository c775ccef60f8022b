#include "pq/pq.h"

namespace export_center::pq {

std::string ToPostgresPlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 1;
  char quote = 0;  // ' or " while inside a literal or quoted identifier
  for (char ch : sql) {
    if (quote != 0) {
      if (ch == quote) quote = 0;  // a doubled quote re-enters on the next char
      out += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      out += ch;
    } else if (ch == '?') {
      out += '$' + std::to_string(next++);
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace export_center::pq
