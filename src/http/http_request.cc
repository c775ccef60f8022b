#include "http/http_request.h"

#include <algorithm>
#include <cctype>

#include "common/ascii.h"

namespace export_center::http {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const std::string& Empty() {
  static const std::string kEmpty;
  return kEmpty;
}

}  // namespace

void HeaderMap::Add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void HeaderMap::Set(std::string name, std::string value) {
  std::erase_if(fields_, [&](const Field& f) { return EqualsIgnoreCaseAscii(f.first, name); });
  fields_.emplace_back(std::move(name), std::move(value));
}

bool HeaderMap::Has(std::string_view name) const {
  return std::any_of(fields_.begin(), fields_.end(),
                     [&](const Field& f) { return EqualsIgnoreCaseAscii(f.first, name); });
}

const std::string& HeaderMap::Get(std::string_view name) const {
  for (const auto& f : fields_) {
    if (EqualsIgnoreCaseAscii(f.first, name)) return f.second;
  }
  return Empty();
}

std::string HttpRequest::Query(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? std::string() : it->second;
}

const std::string& HttpRequest::PathParam(size_t i) const {
  return i < path_params.size() ? path_params[i] : Empty();
}

std::string PercentDecode(std::string_view text, bool plus_as_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_as_space && c == '+' ? ' ' : c);
  }
  return out;
}

void ParseTarget(std::string_view target, std::string* path,
                 std::multimap<std::string, std::string>* query) {
  size_t q = target.find('?');
  *path = PercentDecode(target.substr(0, q), /*plus_as_space=*/false);
  if (q == std::string_view::npos) return;
  std::string_view rest = target.substr(q + 1);
  if (size_t hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key = PercentDecode(pair.substr(0, eq), true);
    std::string value =
        eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), true);
    query->emplace(std::move(key), std::move(value));
  }
}

}  // namespace export_center::http
