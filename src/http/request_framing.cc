#include "http/request_framing.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "common/ascii.h"

namespace export_center::http {
namespace {

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The list elements of every field called `name`, trimmed, empty ones
// skipped as RFC 9110 §5.6.1 asks of a recipient.
std::vector<std::string_view> ListOf(const HeaderMap& headers, std::string_view name) {
  std::vector<std::string_view> out;
  for (const auto& [field, value] : headers.fields()) {
    if (!EqualsIgnoreCaseAscii(field, name)) continue;
    std::string_view rest = value;
    while (true) {
      size_t comma = rest.find(',');
      std::string_view element = TrimOws(rest.substr(0, comma));
      if (!element.empty()) out.push_back(element);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return out;
}

int CountOf(const HeaderMap& headers, std::string_view name) {
  return static_cast<int>(
      std::count_if(headers.fields().begin(), headers.fields().end(),
                    [&](const auto& f) { return EqualsIgnoreCaseAscii(f.first, name); }));
}

// uri-host [":" port] (RFC 3986 §3.2.2): reg-name, IPv4 or a bracketed IP
// literal. Spaces, '/', '@' and controls are what a smuggled Host would use.
bool IsHostText(std::string_view host) {
  static constexpr std::string_view kAllowed = "-._~!$&'()*+,;=%:[]";
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kAllowed.find(c) != kAllowed.npos;
  });
}

bool HostIsValid(const HttpRequest& request, unsigned version) {
  int hosts = CountOf(request.headers, "Host");
  if (hosts > 1) return false;
  if (hosts == 0) return version < 11;  // HTTP/1.0 predates Host
  return IsHostText(request.Header("Host"));
}

bool IsOnlyChunked(const HeaderMap& headers) {
  std::vector<std::string_view> codings = ListOf(headers, "Transfer-Encoding");
  return codings.size() == 1 && EqualsIgnoreCaseAscii(codings[0], "chunked");
}

// "http://host:port/p?q" → "/p?q" and Host "host:port" (RFC 9112 §3.2.2:
// the target's authority wins over a Host field).
bool AbsoluteToOrigin(HttpRequest* request) {
  std::string_view target = request->target;
  size_t sep = target.find("://");
  if (sep == std::string_view::npos) return false;
  std::string_view scheme = target.substr(0, sep);
  if (!EqualsIgnoreCaseAscii(scheme, "http") && !EqualsIgnoreCaseAscii(scheme, "https"))
    return false;
  std::string_view rest = target.substr(sep + 3);
  size_t path_at = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_at);
  // RFC 9110 §4.2.1: an http URI with an empty host is invalid; §4.2.4:
  // userinfo is to be treated as an error.
  if (authority.empty() || authority.find('@') != std::string_view::npos) return false;
  if (!IsHostText(authority)) return false;
  std::string_view path = path_at == std::string_view::npos ? "" : rest.substr(path_at);
  std::string origin = path.empty() || path[0] == '?' ? "/" : "";  // an empty path is "/"
  origin += path;
  request->headers.Set("Host", std::string(authority));
  request->target = std::move(origin);
  ParseTarget(request->target, &request->path, &request->query);
  return true;
}

}  // namespace

HeaderScanner::Verdict HeaderScanner::Scan(std::string_view bytes, size_t* used) {
  size_t i = 0;
  for (; i < bytes.size() && verdict_ == Verdict::kMore; ++i) {
    char c = bytes[i];
    if (line_start_) {
      if (c == ' ' || c == '\t') {
        verdict_ = Verdict::kFolded;
      } else if (c == '\r' || c == '\n') {
        verdict_ = Verdict::kEnd;  // the parser checks that the line is a CRLF
      } else if (++fields_ > max_fields_) {
        verdict_ = Verdict::kTooManyFields;
      }
    }
    line_start_ = c == '\n';
  }
  *used = i;
  return verdict_;
}

int FramingRefusal(const HttpRequest& request, unsigned version, bool parser_chunked) {
  if (!HostIsValid(request, version)) return 400;
  if (!request.headers.Has("Transfer-Encoding")) return 0;
  if (version < 11) return 400;
  if (request.headers.Has("Content-Length")) return 400;
  if (!parser_chunked || !IsOnlyChunked(request.headers)) return 400;
  return 0;
}

bool NormalizeTarget(HttpRequest* request) {
  const std::string& target = request->target;
  if (!target.empty() && target[0] == '/') return true;
  if (target == "*") return request->method == "OPTIONS";
  return AbsoluteToOrigin(request);
}

bool ChunkExtensionsAreClean(std::string_view extensions) {
  return std::none_of(extensions.begin(), extensions.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

}  // namespace export_center::http
