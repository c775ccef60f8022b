// The history statements of SqlTaskStore (sql_task_queries.h).

#include "store/sql_task_queries.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "store/sql/sql_store_core.h"

namespace export_center::store::sql {
namespace {

constexpr char kNewestFirst[] = " ORDER BY requested_at DESC, id DESC";

// A LIKE pattern matching `text` anywhere, with '!' as the escape character
// ('\\' would need doubling in MySQL's string literals, '!' means the same everywhere).
std::string ContainsPattern(const std::string& text) {
  std::string pattern = "%";
  for (char c : text) {
    if (c == '!' || c == '%' || c == '_') pattern += '!';
    pattern += c;
  }
  return pattern + "%";
}

void AddStates(const std::vector<TaskState>& states, Statement* s) {
  if (states.empty()) return;
  std::string marks;
  for (TaskState state : states) {
    marks += marks.empty() ? "?" : ", ?";
    s->params.emplace_back(task::ToString(state));
  }
  s->sql += " AND status IN (" + marks + ")";
}

// " AND …" for the rows older than `after` in the order (`column` DESC, id DESC).
void AddKeyset(const char* column, const std::optional<PageKey>& after, Statement* s) {
  if (!after) return;
  const std::string c = column;
  s->sql += " AND " + c + " <= ? AND (" + c + " < ? OR id < ?)";
  s->params.emplace_back(after->at);
  s->params.emplace_back(after->at);
  s->params.emplace_back(after->id);
}

// The page and the bounded count of the rows `where` selects from `table`.
PageStatements NewestPage(const std::string& columns, const std::string& table,
                          const Statement& where, const char* order_column,
                          const std::optional<PageKey>& after, int page, int size) {
  const int64_t limit = std::clamp(size, 1, 100);
  const int64_t offset = after ? 0 : (std::max(page, 1) - int64_t{1}) * limit;
  PageStatements out;
  out.count = where;
  out.count.sql =
      "SELECT COUNT(*) FROM (SELECT 1 AS one FROM " + table + where.sql + " LIMIT ?) bounded";
  out.count.params.emplace_back(kExactTotalBound + 1);
  out.rows = where;
  AddKeyset(order_column, after, &out.rows);
  out.rows.sql = "SELECT " + columns + " FROM " + table + out.rows.sql + " ORDER BY " +
                 order_column + " DESC, id DESC LIMIT ? OFFSET ?";
  out.rows.params.emplace_back(limit + 1);
  out.rows.params.emplace_back(offset);
  return out;
}

// " AND …" for the scope, on the export_task columns.
void AddScope(const OperatorScope& scope, Statement* s) {
  if (!scope.tenant_id) return;
  s->sql += " AND tenant_id = ?";
  s->params.emplace_back(*scope.tenant_id);
  if (scope.app_code) {
    s->sql += " AND app_code = ?";
    s->params.emplace_back(task::ToString(*scope.app_code));
  }
}

// The WHERE of an operator's filter over export_task.
Statement FilterWhere(const OperatorFilter& f) {
  Statement s{" WHERE 1 = 1", {}};
  AddScope(f.scope, &s);
  if (f.requested_by) {
    s.sql += " AND requested_by = ?";
    s.params.emplace_back(*f.requested_by);
  }
  if (f.export_type) {
    s.sql += " AND export_type = ?";
    s.params.emplace_back(*f.export_type);
  }
  AddStates(f.any_status, &s);
  if (f.failure_code) {
    s.sql += " AND failure_code = ?";
    s.params.emplace_back(*f.failure_code);
  }
  if (f.from_ms) {
    s.sql += " AND requested_at >= ?";
    s.params.emplace_back(*f.from_ms);
  }
  if (f.to_ms) {
    s.sql += " AND requested_at < ?";
    s.params.emplace_back(*f.to_ms);
  }
  return s;
}

// The tasks of the scope requested in the window.
Statement WindowWhere(const OperatorScope& scope, int64_t since_ms) {
  Statement s{" WHERE requested_at >= ?", {since_ms}};
  AddScope(scope, &s);
  return s;
}

}  // namespace

PageStatements TaskListStatements(const TaskCatalog::ListQuery& q) {
  Statement where{" WHERE tenant_id = ? AND app_code = ?",
                  {q.tenant_id, task::ToString(q.app_code)}};
  if (q.requested_by) {
    where.sql += " AND requested_by = ?";
    where.params.emplace_back(*q.requested_by);
  }
  if (q.status) {
    where.sql += " AND status = ?";
    where.params.emplace_back(task::ToString(*q.status));
  }
  if (q.export_type) {
    where.sql += " AND export_type = ?";
    where.params.emplace_back(*q.export_type);
  }
  AddStates(q.any_status, &where);
  if (q.retrying) {
    where.sql += *q.retrying ? " AND status = 'PENDING' AND attempt_count > 0"
                             : " AND status = 'PENDING' AND attempt_count = 0";
  }
  if (q.name_contains) {
    where.sql += " AND LOWER(task_name) LIKE LOWER(?) ESCAPE '!'";
    where.params.emplace_back(ContainsPattern(*q.name_contains));
  }
  return NewestPage(kTaskColumns, "export_task", where, "requested_at", q.after, q.page, q.size);
}

PageStatements OperatorSearchStatements(const OperatorFilter& f, int page, int size,
                                        const std::optional<PageKey>& after) {
  return NewestPage(kTaskColumns, "export_task", FilterWhere(f), "requested_at", after, page, size);
}

Statement OperatorCountStatement(const OperatorFilter& f) {
  Statement s = FilterWhere(f);
  s.sql = "SELECT COUNT(*) FROM export_task" + s.sql;
  return s;
}

Statement OperatorIdsStatement(const OperatorFilter& f, int64_t after_id, int limit) {
  Statement s = FilterWhere(f);
  s.sql = "SELECT id FROM export_task" + s.sql + " AND id > ? ORDER BY id LIMIT ?";
  s.params.emplace_back(after_id);
  s.params.emplace_back(int64_t{std::clamp(limit, 1, 1000)});
  return s;
}

PageStatements AuditStatements(const DownloadAuditQuery& q) {
  Statement where{" WHERE tenant_id = ? AND app_code = ?",
                  {q.tenant_id, task::ToString(q.app_code)}};
  if (q.task_id) {
    where.sql += " AND task_id = ?";
    where.params.emplace_back(*q.task_id);
  }
  if (q.user) {
    where.sql += " AND user_id = ?";
    where.params.emplace_back(*q.user);
  }
  if (q.from_ms) {
    where.sql += " AND downloaded_at >= ?";
    where.params.emplace_back(*q.from_ms);
  }
  if (q.to_ms) {
    where.sql += " AND downloaded_at < ?";
    where.params.emplace_back(*q.to_ms);
  }
  return NewestPage(
      "id, task_id, tenant_id, app_code, user_id, export_type, via, served_by, client_address,"
      " user_agent, request_id, downloaded_at",
      "export_download_audit", where, "downloaded_at", q.after, q.page, q.size);
}

// The keyset bounds of the change feed, as a range on updated_at plus a
// tie-break on id: a range scan of the (updated_at, id) index everywhere.
Statement ChangeStatement(const TaskCatalog::ChangeQuery& q, bool keys_only) {
  Statement s;
  if (q.after_id) {
    s = {" WHERE updated_at >= ? AND (updated_at > ? OR id > ?)",
         {q.updated_after_ms, q.updated_after_ms, *q.after_id}};
  } else {
    s = {" WHERE updated_at > ?", {q.updated_after_ms}};
  }
  if (q.up_to) {
    s.sql += " AND updated_at <= ? AND (updated_at < ? OR id <= ?)";
    s.params.emplace_back(q.up_to->updated_at);
    s.params.emplace_back(q.up_to->updated_at);
    s.params.emplace_back(q.up_to->id);
  }
  if (q.tenant_id) {
    s.sql += " AND tenant_id = ? AND app_code = ?";
    s.params.emplace_back(*q.tenant_id);
    s.params.emplace_back(task::ToString(q.app_code));
    if (q.requested_by) {
      // Checked on the rows of the (updated_at, id) range, never looked up
      // in a user's index: the poll's range is seconds wide, which SQLite,
      // without histograms, cannot know is narrower than a user's history.
      s.sql += " AND COALESCE(requested_by, '') = ?";
      s.params.emplace_back(*q.requested_by);
    }
  }
  s.params.emplace_back(int64_t{std::clamp(q.limit, 1, 10000)});
  s.sql = std::string("SELECT ") + (keys_only ? "updated_at, id" : kTaskColumns) +
          " FROM export_task" + s.sql + " ORDER BY updated_at, id LIMIT ?";
  return s;
}

Statement TypeStatsStatement(const OperatorScope& scope, int64_t since_ms) {
  const std::string ok = " status IN ('SUCCEEDED', 'EXPIRED')";
  const std::string timed = ok + " AND started_at IS NOT NULL AND completed_at IS NOT NULL";
  Statement s = WindowWhere(scope, since_ms);
  s.sql = "SELECT export_type, COUNT(*), SUM(CASE WHEN status NOT IN " + std::string(kActive) +
          " THEN 1 ELSE 0 END), SUM(CASE WHEN" + ok +
          " THEN 1 ELSE 0 END), COALESCE(SUM(CASE WHEN" + ok +
          " THEN size_bytes END), 0), COALESCE(SUM(CASE WHEN" + timed +
          " THEN total_rows END), 0), COALESCE(SUM(CASE WHEN" + timed +
          " THEN completed_at - started_at END), 0),"
          " SUM(CASE WHEN started_at IS NOT NULL THEN 1 ELSE 0 END),"
          " SUM(CASE WHEN started_at IS NOT NULL AND completed_at IS NOT NULL THEN 1 ELSE 0 END)"
          " FROM export_task" +
          s.sql + " GROUP BY export_type ORDER BY COUNT(*) DESC, export_type LIMIT 100";
  return s;
}

Statement FailureCodesStatement(const OperatorScope& scope, int64_t since_ms) {
  Statement s = WindowWhere(scope, since_ms);
  s.sql = "SELECT export_type, failure_code, COUNT(*) FROM export_task" + s.sql +
          " AND failure_code IS NOT NULL GROUP BY export_type, failure_code"
          " ORDER BY export_type, COUNT(*) DESC, failure_code LIMIT 5000";
  return s;
}

Statement PercentilesStatement(const OperatorScope& scope, int64_t since_ms,
                               const std::string& type, const std::vector<PercentileQuery>& parts) {
  // export_type before the window: the (…, export_type, requested_at) indexes
  // read this type's rows of the window and no other type's, and hold what
  // the expressions read (migration 18).
  Statement out;
  for (size_t k = 0; k < parts.size(); ++k) {
    const PercentileQuery& part = parts[k];
    Statement s{" WHERE export_type = ? AND requested_at >= ?", {type, since_ms}};
    AddScope(scope, &s);
    if (k > 0) out.sql += " UNION ALL ";
    out.sql += "SELECT " + std::to_string(k) + " AS k, v FROM (SELECT " + part.expression +
               " AS v FROM export_task" + s.sql + " AND " + part.condition +
               " ORDER BY v LIMIT 1 OFFSET ?) p" + std::to_string(k);
    out.params.insert(out.params.end(), s.params.begin(), s.params.end());
    out.params.emplace_back(part.offset);
  }
  return out;
}

Statement MissingOutboxStatement(int grace_seconds, int limit) {
  // No status filter in NOT EXISTS: a QUARANTINED row must block it too
  // (docs/task-lifecycle.md#reconciler-duties, case A).
  return {
      "SELECT t.id, t.dispatch_version, t.export_type FROM export_task t"
      " WHERE t.status = 'PENDING' AND t.next_retry_at <= {NOW} - ?"
      " AND NOT EXISTS (SELECT 1 FROM export_outbox o"
      " WHERE o.task_id = t.id AND o.dispatch_version = t.dispatch_version)"
      " ORDER BY t.next_retry_at, t.id LIMIT ?",
      {int64_t{grace_seconds} * 1000, limit}};
}

Statement ExpiredLeasesStatement(int limit) {
  // Ordered by lease_until alone: idx_export_task_lease (status, lease_until)
  // hands the rows over in that order; which of one millisecond's comes
  // first does not matter to a batch.
  return {
      "SELECT id, dispatch_version, attempt_count, max_attempts, object_key,"
      " export_type, cancel_requested, lease_owner FROM export_task"
      " WHERE status = 'RUNNING' AND lease_until <= {NOW}"
      " ORDER BY lease_until LIMIT ?",
      {limit}};
}

Statement ExpiredArtifactsStatement(int limit) {
  return {
      "SELECT id, object_key FROM export_task WHERE status = 'SUCCEEDED'"
      " AND expires_at <= {NOW} ORDER BY expires_at, id LIMIT ?",
      {limit}};
}

Statement OldHistoryStatement(int older_than_days, int limit) {
  return {
      "SELECT id FROM export_task WHERE updated_at < {NOW} - ?"
      " AND status IN ('FAILED', 'CANCELLED', 'EXPIRED', 'STALE', 'INCONSISTENT')"
      " ORDER BY updated_at, id LIMIT ?{FOR_UPDATE}",
      {int64_t{older_than_days} * 24 * 3600 * 1000, limit}};
}

// ---- the plan test's list --------------------------------------------------------

std::vector<PlannedStatement> PlannedStatements(const PlanSample& x) {
  std::vector<PlannedStatement> out;
  auto add = [&](std::string name, Statement statement, bool sorts_window, bool unfiltered = false,
                 bool index_only = false) {
    PlannedStatement planned;
    planned.name = std::move(name);
    planned.statement = std::move(statement);
    planned.sorts_window = sorts_window;
    planned.unfiltered = unfiltered;
    planned.index_only = index_only;
    out.push_back(std::move(planned));
  };
  auto add_page = [&](const std::string& name, const PageStatements& p) {
    add(name + " rows", p.rows, false);
    add(name + " count", p.count, false);
  };
  constexpr int64_t kDayMs = 24 * 3600 * 1000;

  // The download center's list: the user's own (requested_by) and the
  // tenant's (platform:download:all), each bare, with every filter of the
  // API, and continued by the cursor.
  for (bool tenant : {false, true}) {
    const std::string who = tenant ? "tenant list" : "user list";
    TaskCatalog::ListQuery base;
    base.tenant_id = x.tenant_id;
    base.app_code = x.app_code;
    if (!tenant) base.requested_by = x.user;
    std::vector<std::pair<std::string, TaskCatalog::ListQuery>> shapes;
    shapes.emplace_back("", base);
    auto with = [&](const std::string& label, auto&& set) {
      TaskCatalog::ListQuery q = base;
      set(q);
      shapes.emplace_back(" " + label, q);
    };
    with("status", [](auto& q) { q.status = TaskState::kFailed; });
    with("one state", [](auto& q) { q.any_status = {TaskState::kSucceeded}; });
    with("failed tab", [](auto& q) {
      q.any_status = {TaskState::kFailed, TaskState::kStale, TaskState::kInconsistent};
    });
    with("queued", [](auto& q) { q.retrying = false; });
    with("retrying", [](auto& q) { q.retrying = true; });
    with("type", [&](auto& q) { q.export_type = x.export_type; });
    with("type and state", [&](auto& q) {
      q.export_type = x.export_type;
      q.any_status = {TaskState::kFailed};
    });
    with("name", [](auto& q) { q.name_contains = "report"; });
    for (auto& [label, q] : shapes) {
      add_page(who + label, TaskListStatements(q));
      q.after = x.after;
      add(who + label + " after", TaskListStatements(q).rows, false);
    }
  }

  // The operators' search, in each scope, by each filter; its bulk counts and id pages.
  std::vector<std::pair<std::string, OperatorScope>> scopes = {
      {"platform", {}},
      {"tenant", {x.tenant_id, std::nullopt}},
      {"tenant app", {x.tenant_id, x.app_code}}};
  for (const auto& [scope_name, scope] : scopes) {
    std::vector<std::pair<std::string, OperatorFilter>> filters;
    OperatorFilter base;
    base.scope = scope;
    filters.emplace_back("", base);
    auto with = [&](const std::string& label, auto&& set) {
      OperatorFilter f = base;
      set(f);
      filters.emplace_back(" " + label, f);
    };
    with("user", [&](auto& f) { f.requested_by = x.user; });
    with("type", [&](auto& f) { f.export_type = x.export_type; });
    with("status", [](auto& f) { f.any_status = {TaskState::kFailed}; });
    with("retryable", [](auto& f) {
      f.any_status = {TaskState::kFailed, TaskState::kCancelled, TaskState::kInconsistent};
    });
    with("failure code", [&](auto& f) { f.failure_code = x.failure_code; });
    with("window", [&](auto& f) {
      f.from_ms = x.now_ms - 7 * kDayMs;
      f.to_ms = x.now_ms - kDayMs;
    });
    for (const auto& [label, f] : filters) {
      const std::string name = "operator search " + scope_name + label;
      const bool everything = label.empty() && !scope.tenant_id;
      const PageStatements page = OperatorSearchStatements(f, 1, 20, std::nullopt);
      add(name + " rows", page.rows, false, everything);
      add(name + " count", page.count, false, everything);
      add(name + " after", OperatorSearchStatements(f, 1, 20, x.after).rows, false);
      add(name + " bulk count", OperatorCountStatement(f), false, everything, label == " type");
      add(name + " bulk ids", OperatorIdsStatement(f, 0, 500), true, everything);
    }
    // The console's RETRY of one type: an exact count of the type's retryable states.
    OperatorFilter retry_type = base;
    retry_type.export_type = x.export_type;
    retry_type.any_status = {TaskState::kFailed, TaskState::kCancelled, TaskState::kInconsistent};
    add("operator search " + scope_name + " type retryable bulk count",
        OperatorCountStatement(retry_type), false, false, true);
  }

  // The change feed of the task events, for a user, a tenant and everyone.
  for (int who = 0; who < 3; ++who) {
    TaskCatalog::ChangeQuery q;
    q.updated_after_ms = x.now_ms - 60000;
    if (who > 0) q.tenant_id = x.tenant_id;
    if (who > 1) q.requested_by = x.user;
    const std::string name = std::string("change feed ") + (who == 0   ? "all"
                                                            : who == 1 ? "tenant"
                                                                       : "user");
    add(name, ChangeStatement(q, false), false);
    q.after_id = x.after.id;
    q.up_to = TaskCatalog::ChangeKey{x.now_ms, x.after.id};
    add(name + " keys", ChangeStatement(q, true), false);
  }

  // The stats' windows: per type, its failure codes and percentiles.
  for (const auto& [scope_name, scope] : scopes) {
    for (int64_t window : {kDayMs, 7 * kDayMs}) {
      const std::string name = "stats " + scope_name + (window == kDayMs ? " 24h" : " 7d");
      const int64_t since = x.now_ms - window;
      add(name + " types", TypeStatsStatement(scope, since), true, false, true);
      add(name + " failure codes", FailureCodesStatement(scope, since), true, false, true);
      const std::string wait = "started_at IS NOT NULL";
      const std::string ran = "started_at IS NOT NULL AND completed_at IS NOT NULL";
      add(name + " percentiles",
          PercentilesStatement(scope, since, x.export_type,
                               {{"started_at - requested_at", wait, 3},
                                {"started_at - requested_at", wait, 5},
                                {"completed_at - started_at", ran, 3},
                                {"completed_at - started_at", ran, 5}}),
          true, false, true);
    }
  }

  // The reconciler's and the expiry's scans, and the retention sweep.
  add("reconciler missing outbox", MissingOutboxStatement(30, 50), false);
  add("reconciler expired leases", ExpiredLeasesStatement(20), false);
  add("expiry due files", ExpiredArtifactsStatement(50), false);
  add("retention old history", OldHistoryStatement(365, 100), false);

  // The download audit, bare and by each filter, and continued by the cursor.
  DownloadAuditQuery audit;
  audit.tenant_id = x.tenant_id;
  audit.app_code = x.app_code;
  std::vector<std::pair<std::string, DownloadAuditQuery>> audits = {{"", audit}};
  DownloadAuditQuery by_task = audit, by_user = audit, window = audit;
  by_task.task_id = x.task_id;
  by_user.user = x.user;
  window.from_ms = x.now_ms - 7 * kDayMs;
  window.to_ms = x.now_ms;
  audits.emplace_back(" task", by_task);
  audits.emplace_back(" user", by_user);
  audits.emplace_back(" window", window);
  for (auto& [label, q] : audits) {
    add_page("download audit" + label, AuditStatements(q));
    q.after = x.after;
    add("download audit" + label + " after", AuditStatements(q).rows, false);
  }
  return out;
}

}  // namespace export_center::store::sql
