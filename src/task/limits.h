#pragma once
// LimitsOptions: the deployment's quotas on tasks (the `limits:` section).
//
// Lives with task/ rather than api/ or dispatch/ because both read it: api/
// checks the create-time limits (dedupe window, active tasks, request body
// and parameter sizes), dispatch/ the run-time ones (file size, retention),
// and both already depend on task/ and not on each other.

#include <cstdint>

namespace export_center::task {

struct LimitsOptions {
  int dedupe_window_seconds = 60;
  int max_active_per_user = 3;
  int max_active_per_type = 5;
  int64_t max_file_bytes = 50LL * 1024 * 1024;
  int retention_days = 7;
  int max_body_bytes = 64 * 1024;
  int max_parameter_keys = 20;
  int max_parameter_json_bytes = 4096;
  int max_parameter_string_chars = 256;
  // A download is audited (and counted) once per task, user and this window
  // (docs/http-api.md#download-audit); 0 counts every answer.
  int download_audit_window_seconds = 600;
};

}  // namespace export_center::task
