#include "usecase/preview.h"

#include <spdlog/spdlog.h>

#include "common/ids.h"

namespace export_center::usecase {

bool PreviewRateLimiter::Admit(const std::string& key, std::chrono::steady_clock::time_point now) {
  MutexLock lock(&mu_);
  if (now - window_start_ >= std::chrono::minutes(1)) {
    window_start_ = now;
    counts_.clear();
  }
  int& count = counts_[key];
  if (count >= per_minute_) return false;
  ++count;
  return true;
}

StatusOr<task::PreviewTable> PreviewExport(const PreviewFn& read, PreviewRateLimiter& limiter,
                                           const Principal& p, const CreateRequest& request) {
  // The key holds the tenant: user ids are unique only within one.
  if (!limiter.Admit(p.tenant + '\n' + p.user, std::chrono::steady_clock::now())) {
    return LimitExceeded("too many previews: at most " + std::to_string(limiter.per_minute()) +
                         " a minute; please wait a moment and try again");
  }
  if (!read) return Internal("preview is not wired");
  // A task that is never stored: the tenant, app and user come from the
  // caller only, exactly as create fills them.
  task::Task t;
  // The data contracts require a task id (docs/provider-contract.md): a
  // fresh one, which no stored task will carry since it is never stored.
  t.id = NextId();
  t.tenant_id = p.tenant;
  t.app_code = p.app;
  t.requested_by = p.user;
  t.export_type = request.definition->name;
  t.task_name = request.task_name;
  t.format = request.format;
  t.parameters_json = request.canonical_parameters;
  t.max_attempts = request.definition->max_attempts;
  t.column_policy = request.column_policy;
  t.locale = request.locale;
  EC_ASSIGN_OR_RETURN(task::PreviewTable table, read(t, request.snapshot));
  // The id ties this line to the data-source lines the preview logged under it.
  spdlog::info("preview taskId={} (never stored) exportType={} tenantId={} rows={} rowCount={}{}",
               t.id, t.export_type, t.tenant_id, table.rows.size(), table.row_count,
               table.row_count_exact ? "" : " (at least)");
  return table;
}

}  // namespace export_center::usecase
