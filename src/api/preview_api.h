#pragma once
// PreviewApi: POST /api/platform/v1/files/export-previews
// (docs/http-api.md#post-export-previews--preview).
//
// Takes the body of create, checked by the same code (create_request.h),
// and answers the columns, the first rows as they will appear in the file
// and the row count against the type's max-rows, with the suggestions the
// type allows when the count is over. The data path itself is injected (app/
// wires attempt::ExportPreviewer): the preview reads what an attempt reads.
// It creates no task, writes no file, counts toward no create limit, and is
// limited per user (tenant + user) to preview.per-user-per-minute requests.
// Thread-safe: the server's worker threads call Handle at once.

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "api/auth.h"
#include "common/mutex.h"
#include "common/status.h"
#include "http/http_server.h"
#include "registry/registry.h"
#include "task/limits.h"
#include "task/preview.h"
#include "task/task.h"

namespace export_center::api {

// Reads the preview of a task that is never stored (attempt::ExportPreviewer::Preview).
using PreviewFn = std::function<StatusOr<task::PreviewTable>(
    const task::Task&, std::shared_ptr<const registry::RegistrySnapshot>)>;

// At most `per_minute` admissions per key in each one-minute window. Fixed
// windows rather than a sliding log: one counter per user, and the whole map
// is dropped when the window turns, so memory is bounded by one minute's
// callers.
class PreviewRateLimiter {
 public:
  explicit PreviewRateLimiter(int per_minute) : per_minute_(per_minute) {}
  // Counts the request and returns true if the key has budget left.
  bool Admit(const std::string& key, std::chrono::steady_clock::time_point now);

 private:
  const int per_minute_;
  Mutex mu_;
  std::chrono::steady_clock::time_point window_start_ GUARDED_BY(mu_);
  std::unordered_map<std::string, int> counts_ GUARDED_BY(mu_);
};

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
  const task::PreviewOptions options_;
  const task::LimitsOptions limits_;
  PreviewRateLimiter limiter_;
};

// The envelope data of a preview (docs/http-api.md#post-export-previews--preview);
// `policy` is the column policy the preview's columns and rows went through.
nlohmann::json PreviewToJson(const registry::ExportDefinition& def, task::FileFormat format,
                             const task::PreviewTable& table, const task::ColumnPolicy& policy);

}  // namespace export_center::api
