#pragma once
// PreviewApi: POST /api/platform/v1/files/export-previews
// (docs/http-api.md#post-export-previews--preview).
//
// Parse → call → envelope: takes the body of create, checked by the same code
// (usecase/create_request.h), calls the preview use case (usecase/preview.h)
// and answers the columns, the first rows as they will appear in the file
// and the row count against the type's max-rows, with the suggestions the
// type allows when the count is over. Thread-safe: the server's worker
// threads call Handle at once.

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/auth.h"
#include "common/status.h"
#include "http/http_server.h"
#include "registry/registry.h"
#include "task/limits.h"
#include "task/preview.h"
#include "task/task.h"
#include "usecase/preview.h"

namespace export_center::api {

// The reader and the per-user budget are the use case's (usecase/preview.h).
using usecase::PreviewFn;
using usecase::PreviewRateLimiter;

class PreviewApi {
 public:
  PreviewApi(PreviewFn preview, task::PreviewOptions options, task::LimitsOptions limits);

  // Answers the request of an authenticated caller through the envelope.
  void Handle(const http::HttpRequest& req, const Principal& principal,
              std::shared_ptr<const registry::RegistrySnapshot> snapshot, http::HttpResponse& res);

 private:
  StatusOr<nlohmann::json> DoPreview(const http::HttpRequest& req, const Principal& principal,
                                     std::shared_ptr<const registry::RegistrySnapshot> snapshot);

  const PreviewFn preview_;
  const task::LimitsOptions limits_;
  PreviewRateLimiter limiter_;
};

// The envelope data of a preview (docs/http-api.md#post-export-previews--preview);
// `policy` is the column policy the preview's columns and rows went through.
nlohmann::json PreviewToJson(const registry::ExportDefinition& def, task::FileFormat format,
                             const task::PreviewTable& table, const task::ColumnPolicy& policy);

}  // namespace export_center::api
