#include "api/envelope.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "common/json_dump.h"

namespace export_center::api {

int EnvelopeCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kLimitExceeded:
      return 429;
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kCancelled:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

std::string EnvelopeMessage(const Status& status) {
  if (status.ok()) return "success";
  // Database errors, host names, constraint names and file paths stay in the
  // log, never in a browser: a 500-class answer carries a generic message.
  if (status.IsTransient()) return "service temporarily unavailable; please retry in a few seconds";
  if (EnvelopeCode(status.code()) == 500) return "internal error; please contact support";
  return status.message();
}

namespace {

// The envelope of `status` for the caller of one request: a 500-class status
// is logged whole under the request id, and the caller gets the generic
// message plus that id, which is all support needs to find the detail.
nlohmann::json RequestErrorEnvelope(const http::HttpResponse& res, const Status& status) {
  const int code = EnvelopeCode(status.code());
  std::string message = EnvelopeMessage(status);
  if (code == 500) {
    const std::string& request_id = res.Header("X-Request-Id");
    spdlog::error("request {} failed: {}", request_id.empty() ? "-" : request_id,
                  status.ToString());
    if (!request_id.empty()) message += " (request " + request_id + ")";
  }
  return ErrorEnvelope(code, message);
}

}  // namespace

nlohmann::json SuccessEnvelope(nlohmann::json data) {
  return {{"code", "200"}, {"message", "success"}, {"data", std::move(data)}};
}

nlohmann::json ErrorEnvelope(int code, const std::string& message) {
  return {{"code", std::to_string(code)}, {"message", message}, {"data", nullptr}};
}

nlohmann::json ErrorEnvelope(const Status& status) {
  return ErrorEnvelope(EnvelopeCode(status.code()), EnvelopeMessage(status));
}

void WriteEnvelope(http::HttpResponse& res, int http_status, const nlohmann::json& envelope) {
  res.status = http_status;
  // Tolerant: a response stays well-formed even if a message holds bad UTF-8.
  res.SetContent(DumpTolerant(envelope), "application/json; charset=utf-8");
}

void WriteSuccess(http::HttpResponse& res, nlohmann::json data) {
  WriteEnvelope(res, 200, SuccessEnvelope(std::move(data)));
}

void WriteStatus(http::HttpResponse& res, const Status& status) {
  WriteEnvelope(res, 200, RequestErrorEnvelope(res, status));
}

void WriteHttpError(http::HttpResponse& res, int code, const std::string& message) {
  WriteEnvelope(res, code, ErrorEnvelope(code, message));
}

void WriteHttpStatus(http::HttpResponse& res, const Status& status) {
  WriteEnvelope(res, EnvelopeCode(status.code()), RequestErrorEnvelope(res, status));
}

}  // namespace export_center::api
