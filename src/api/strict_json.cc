#include "api/strict_json.h"

#include <algorithm>
#include <string>

#include "common/ascii.h"

namespace export_center::api {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Status CheckJsonContentType(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  if (ToLowerAscii(Trim(media)) != "application/json") {
    return InvalidArgument("Content-Type must be application/json");
  }
  std::string_view rest = content_type.substr(std::min(media.size(), content_type.size()));
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the ';'
    size_t end = rest.find(';');
    std::string param = ToLowerAscii(Trim(rest.substr(0, end)));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (param.rfind("charset=", 0) == 0) {
      std::string charset = param.substr(8);
      if (charset.size() >= 2 && charset.front() == '"' && charset.back() == '"') {
        charset = charset.substr(1, charset.size() - 2);
      }
      if (charset != "utf-8" && charset != "utf8") {
        return InvalidArgument("Content-Type charset must be UTF-8");
      }
    }
  }
  return Status::Ok();
}

}  // namespace export_center::api
