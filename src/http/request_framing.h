#pragma once
// The request framing rules the server enforces beyond its HTTP parser
// (RFC 9112 §2–7): what a header section may contain before it is parsed,
// which message-body framings are read, and which request-target forms are
// served. docs/http-serving.md lists them; tests/http/beast/ checks each one
// on the real server.
//
// Why beyond the parser: Boost.Beast 1.81 unfolds obs-fold instead of
// refusing it, reads a request whose Transfer-Encoding does not end in
// `chunked` as having no body (the body is then read as the next request:
// smuggling behind a proxy that frames it by Transfer-Encoding), accepts
// Content-Length next to a Transfer-Encoding it does not act on, and lets
// control characters through inside quoted chunk extensions.
//
// Plain functions and a small scanner over bytes: no I/O, no server library.

#include <cstddef>
#include <string_view>

#include "http/http_request.h"

namespace export_center::http {

// Header fields one request may carry. A browser sends 15–25 and a request
// behind a proxy chain rarely 40; Apache's LimitRequestFields defaults to
// 100. Counted before the parser stores them, so thousands of tiny fields
// within the byte limit cost no allocation each.
constexpr int kMaxHeaderFields = 100;

// Bytes the server holds between two chunks' data while waiting for the end
// of a chunk-size line (with its extensions) or of the trailer section. A
// chunk-size line needs at most 16 hex digits and CRLF; no client of this API
// sends extensions or trailers. 4 KiB leaves a hundred times that room and
// bounds what 4096 connections can pin this way at 16 MiB. Beast 1.81 has no
// limit here (a later Beast caps chunk headers at 8 KiB).
constexpr size_t kMaxChunkFramingBytes = 4096;

// Looks at a request's header section as its bytes arrive, before the
// parser: counts field lines and finds lines that begin with whitespace —
// obs-fold (RFC 9112 §5.2) or whitespace before the first field (§2.2),
// which Beast would unfold or skip. Feed it each byte once, in order,
// starting at the request line.
class HeaderScanner {
 public:
  enum class Verdict {
    kMore,           // no end of the header section yet
    kEnd,            // reached the empty line that ends it; later bytes are not looked at
    kFolded,         // a line begins with SP or HTAB: refuse with 400
    kTooManyFields,  // more than max_fields field lines: refuse with 431
  };

  explicit HeaderScanner(int max_fields = kMaxHeaderFields) : max_fields_(max_fields) {}

  // Scans the next bytes; *used is how many were looked at (all of them
  // unless the verdict is final). Once final, the verdict stays.
  Verdict Scan(std::string_view bytes, size_t* used);

 private:
  int max_fields_;
  int fields_ = 0;
  bool line_start_ = false;  // the request line is not a field
  Verdict verdict_ = Verdict::kMore;
};

// 0 when the request's header frames its body unambiguously, else the status
// to refuse it with (always 400, and the connection is then closed):
// - HTTP/1.1 without exactly one Host field, or with an invalid Host (§3.2);
// - Transfer-Encoding in an HTTP/1.0 request (§6.1);
// - Transfer-Encoding together with Content-Length (§6.1 allows treating it
//   as an error; behind a proxy that honours Content-Length instead, reading
//   by Transfer-Encoding would leave a smuggled request);
// - Transfer-Encoding other than exactly `chunked` once, without parameters
//   (§6.3 rule 4: not final; §7: applied twice, or parameters; any other
//   coding is one this server does not decode). `parser_chunked` is whether
//   the parser itself frames the body as chunked; both must agree.
// Content-Length values (digits only, equal when repeated, within 64 bits)
// are the parser's to check.
int FramingRefusal(const HttpRequest& request, unsigned version, bool parser_chunked);

// Checks the request-target's form and brings it to origin-form (§3.2):
// origin-form ("/path?q") stays; absolute-form ("http://host/path?q",
// §3.2.2) becomes "/path?q" with Host replaced by its authority, path and
// query parsed again; asterisk-form ("*") only with OPTIONS (§3.2.4).
// False for anything else (authority-form, other schemes, userinfo, an empty
// host): refuse with 400.
bool NormalizeTarget(HttpRequest* request);

// Whether raw chunk extensions hold only visible characters, SP and HTAB.
// Beast 1.81 does not check inside a quoted extension value, where a bare LF
// would end the line for a peer that accepts LF alone.
bool ChunkExtensionsAreClean(std::string_view extensions);

}  // namespace export_center::http
