#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "api/create_request.h"
#include "api/envelope.h"
#include "api/handler_deps.h"
#include "api/strict_json.h"
#include "api/task_json.h"
#include "usecase/create.h"
#include "usecase/file_password.h"
#include "usecase/task_actions.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using Request = http::HttpRequest;
using Response = http::HttpResponse;

// The envelope of a create or export again: the task and `deduplicated`;
// a full key derivation 503 with Retry-After.
void WriteCreated(Response& res, const StatusOr<usecase::CreateResult>& created) {
  if (usecase::IsKeyDerivationBusy(created.status())) {
    res.SetHeader("Retry-After", std::to_string(usecase::kKeyDerivationRetryAfterSeconds));
    return WriteHttpError(res, 503, created.status().message());
  }
  if (!created.ok()) return WriteStatus(res, created.status());
  json data = TaskToJson(created->task);
  data["deduplicated"] = created->deduplicated;
  WriteSuccess(res, std::move(data));
}

// The optional body of export-again: {"filePassword": "..."}, the new
// password of a file that was password-protected (the old one is not kept).
// No body: none.
StatusOr<std::string> ExportAgainPassword(const Request& req) {
  if (req.body.empty()) return std::string();
  EC_RETURN_IF_ERROR(CheckJsonContentType(req.Header("Content-Type")));
  EC_ASSIGN_OR_RETURN(json body, ParseStrictJson(req.body));
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key != "filePassword") return InvalidArgument("unknown field " + key);
  }
  auto found = body.find("filePassword");
  if (found == body.end() || found->is_null()) return std::string();
  if (!found->is_string()) return InvalidArgument("filePassword must be a string");
  return found->get<std::string>();
}

}  // namespace

std::vector<Route> TaskActionHandlers::Routes() {
  const std::string one = "/export-tasks/{id}";
  return {
      FamilyRoute(this, "POST", "/export-tasks", &TaskActionHandlers::CreateTask),
      FamilyRoute(this, "POST", one + "/retry", &TaskActionHandlers::Retry),
      FamilyRoute(this, "POST", one + "/export-again", &TaskActionHandlers::ExportAgain),
      FamilyRoute(this, "POST", one + "/cancel", &TaskActionHandlers::Cancel),
  };
}

// ---- POST /export-tasks ------------------------------------------------------

void TaskActionHandlers::CreateTask(const Request& req, const Principal& p, Response& res) {
  auto request = ParseCreateRequest(req, p, deps_.Snapshot(), deps_.api->limits);
  if (!request.ok()) return WriteStatus(res, request.status());
  WriteCreated(res, usecase::CreateTask(deps_.create, p, *request, res.Header(kRequestIdHeader)));
}

// ---- retry / export again / cancel -------------------------------------------

void TaskActionHandlers::Retry(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::RetryTask(deps_.actions, p, req.PathParam(0), res.Header(kRequestIdHeader));
  if (!t.ok()) return WriteStatus(res, t.status());
  WriteSuccess(res, TaskToJson(*t));
}

void TaskActionHandlers::ExportAgain(const Request& req, const Principal& p, Response& res) {
  WriteCreated(res, usecase::ExportAgain(deps_.create, deps_.actions, p, req.PathParam(0),
                                         ExportAgainPassword(req), res.Header(kRequestIdHeader)));
}

void TaskActionHandlers::Cancel(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::CancelTask(deps_.actions, p, req.PathParam(0));
  if (!t.ok()) return WriteStatus(res, t.status());
  WriteSuccess(res, TaskToJson(*t));
}

}  // namespace export_center::api
