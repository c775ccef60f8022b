#pragma once
// What the access log and the server's own refusals say about a request
// (docs/http-api.md#envelope, docs/observability.md): the request id kept or
// made, the path as it may be logged, the envelope code of an answer, the
// message of a refusal made before any handler. Pure functions, any thread.

#include <string>

#include "http/http_response.h"

namespace export_center::api {

// A caller-supplied request id is kept only if it is short and harmless in
// logs; otherwise a new one.
std::string AcceptRequestId(const std::string& given);

// The path as the log may show it: signed-URL tokens redacted, control, bidi
// and separator characters escaped.
std::string LoggablePath(const std::string& path);

// The envelope code, read back from the body for the access log; "-" if none.
std::string EnvelopeCodeOf(const http::HttpResponse& res);

// The message of an HTTP-layer refusal the server makes before any handler.
std::string RejectMessage(int status, int max_body_bytes);

}  // namespace export_center::api
