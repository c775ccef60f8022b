#include "api/request_log.h"

#include <spdlog/fmt/fmt.h>

#include <regex>
#include <string_view>

#include "common/ids.h"
#include "common/utf8.h"

namespace export_center::api {
namespace {

constexpr char kDownloadsPrefix[] = "/api/platform/v1/files/downloads/";

}  // namespace

std::string AcceptRequestId(const std::string& given) {
  static const std::regex kSafe("[A-Za-z0-9._-]{1,64}");
  return std::regex_match(given, kSafe) ? given : NewUuid();
}

// Signed-URL tokens are credentials: they never reach the log. The path is
// percent-decoded, so a client could send %0A (or NEL, U+2028) and write a
// line of its own into the log (found by api_fuzz_test), or a space and
// forge a field: control, bidi and line-separator characters, space, quote
// and backslash are written as \uXXXX, invalid bytes as \xNN.
std::string LoggablePath(const std::string& path) {
  if (path.rfind(kDownloadsPrefix, 0) == 0) return std::string(kDownloadsPrefix) + "<redacted>";
  std::string out;
  out.reserve(path.size());
  std::string_view rest = path;
  while (!rest.empty()) {
    char32_t cp = 0;
    const size_t n = utf8::Decode(rest, &cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(rest[0]));
      rest.remove_prefix(1);
      continue;
    }
    if (utf8::IsControlOrBidi(cp) || cp == 0x2028 || cp == 0x2029 || cp == ' ' || cp == '"' ||
        cp == '\\') {
      out += fmt::format("\\u{:04x}", static_cast<uint32_t>(cp));
    } else {
      out.append(rest.substr(0, n));
    }
    rest.remove_prefix(n);
  }
  return out;
}

// The envelope code, read back from the body for the access log.
std::string EnvelopeCodeOf(const http::HttpResponse& res) {
  constexpr std::string_view kPrefix = "{\"code\":\"";
  if (res.body.rfind(kPrefix, 0) != 0) return "-";
  size_t end = res.body.find('"', kPrefix.size());
  return end == std::string::npos ? "-" : res.body.substr(kPrefix.size(), end - kPrefix.size());
}

std::string RejectMessage(int status, int max_body_bytes) {
  switch (status) {
    case 400:
      return "malformed HTTP request";
    case 413:
      return "request body exceeds " + std::to_string(max_body_bytes) + " bytes";
    case 431:
      return "request header too large";
    case 503:
      return "too many connections; please retry shortly";
    default:
      return status < 500 ? "bad request" : "internal error; please contact support";
  }
}

}  // namespace export_center::api
