#pragma once
// The JSON envelope every endpoint answers with (docs/http-api.md#envelope):
//
//   {"code":"200","message":"success","data":...}
//
// Business success and failure both travel as HTTP 200 and are told apart by
// `code` (the house convention). Only the download endpoints and the
// HTTP-layer errors (unknown route 404, wrong method 405, body too large 413,
// unsatisfiable range 416) also carry a real HTTP status. Status codes map to
// envelope codes in exactly one place: EnvelopeCode().

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "http/http_response.h"

namespace export_center::api {

// InvalidArgument→400, Unauthenticated→401, PermissionDenied→403, NotFound→404,
// Conflict→409, LimitExceeded→429, everything else (Unavailable included)→500.
// kOk→200.
int EnvelopeCode(StatusCode code);

// The message shown to a person. Transient failures get a retry hint; neither
// they nor internal failures show their details (which name databases, hosts,
// constraints or paths).
std::string EnvelopeMessage(const Status& status);

// {"code":"200","message":"success","data":data}
nlohmann::json SuccessEnvelope(nlohmann::json data);
// {"code":"<code>","message":message,"data":null}
nlohmann::json ErrorEnvelope(int code, const std::string& message);
nlohmann::json ErrorEnvelope(const Status& status);

// Writes the envelope as the JSON body with the given HTTP status.
void WriteEnvelope(http::HttpResponse& res, int http_status, const nlohmann::json& envelope);
// HTTP 200 with a success envelope.
void WriteSuccess(http::HttpResponse& res, nlohmann::json data);
// HTTP 200 with the envelope code of `status` (non-download endpoints). A
// 500-class status is logged with the response's X-Request-Id, and the
// message names that id instead of the detail; so does WriteHttpStatus.
void WriteStatus(http::HttpResponse& res, const Status& status);
// The HTTP status equals the envelope code (download endpoints, HTTP-layer errors).
void WriteHttpError(http::HttpResponse& res, int code, const std::string& message);
void WriteHttpStatus(http::HttpResponse& res, const Status& status);

// 64-bit ids and counters travel as JSON strings so JavaScript keeps every digit.
inline nlohmann::json Int64String(int64_t v) { return std::to_string(v); }

}  // namespace export_center::api
