#include "tests/support/history_seed.h"

#include <algorithm>
#include <string>

namespace export_center::testing {
namespace {

constexpr int64_t kDayMs = 24 * 3600 * 1000LL;
constexpr int64_t kRowsPerStatement = 500;
constexpr int64_t kRowsPerTransaction = 10000;

// A small deterministic generator: the same shape every run.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string Quote(const std::string& text) { return "'" + text + "'"; }
std::string Num(int64_t n) { return std::to_string(n); }

struct SeedTask {
  int64_t id = 0;
  std::string tenant, app, user, type, status;
  std::string failure_code;  // "" for none
  int64_t requested_at = 0, started_at = 0, completed_at = 0, expires_at = 0, updated_at = 0;
  bool ended = false, has_file = false;
};

SeedTask MakeTask(const HistoryShape& s, int64_t i, int64_t now_ms) {
  SeedTask t;
  t.id = i + 1;
  const uint64_t r = Mix(static_cast<uint64_t>(i));
  const int64_t span = s.span_days * kDayMs;
  // Evenly spread, oldest first, so ids grow with requested_at as generated ids do.
  t.requested_at = now_ms - span + (span * i) / std::max<int64_t>(s.tasks, 1) + 1;
  const bool big = r % 100 < 80;
  const uint64_t r2 = Mix(r);
  if (big) {
    t.tenant = "t1";
    t.app = "PLATFORM";
    t.user = "u" + Num(static_cast<int64_t>(r2 % std::max(s.tenant_one_users, 1)));
  } else {
    const int tenant = 2 + static_cast<int>(r2 % std::max(s.other_tenants, 1));
    t.tenant = "t" + Num(tenant);
    t.app = tenant % 5 == 0 ? "MERCHANT" : "PLATFORM";
    t.user = "u" + Num(static_cast<int64_t>((r2 >> 16) % std::max(s.users_per_other_tenant, 1)));
  }
  t.type = "type" + Num(static_cast<int64_t>((r2 >> 32) % std::max(s.types, 1)));
  const int64_t age = now_ms - t.requested_at;
  const int fate = static_cast<int>((r2 >> 40) % 1000);
  t.started_at = t.requested_at + 200 + static_cast<int64_t>(r % 5000);
  t.completed_at = t.started_at + 1000 + static_cast<int64_t>((r >> 20) % 60000);
  t.ended = true;
  if (age < 10 * 60 * 1000 && fate < 300) {
    t.status = fate < 150 ? "PENDING" : "RUNNING";
    t.ended = false;
  } else if (fate < 50) {
    t.status = "FAILED";
    t.failure_code = kSeedFailureCodes[(r >> 8) % 5];
  } else if (fate < 80) {
    t.status = "CANCELLED";
    t.failure_code = "CANCELLED";
  } else if (fate < 85) {
    t.status = "STALE";
  } else if (fate < 90) {
    t.status = "INCONSISTENT";
  } else {
    t.has_file = true;
    t.expires_at = t.completed_at + 7 * kDayMs;
    t.status = t.expires_at > now_ms ? "SUCCEEDED" : "EXPIRED";
  }
  t.updated_at = t.ended ? (t.status == "EXPIRED" ? t.expires_at : t.completed_at) : t.requested_at;
  t.updated_at = std::min(t.updated_at, now_ms);
  return t;
}

std::string TaskValues(const SeedTask& t, int64_t i) {
  auto opt = [](bool has, int64_t v) { return has ? Num(v) : std::string("NULL"); };
  const bool started = t.status != "PENDING";
  const bool file = t.has_file;
  std::string name = "Export of " + t.type + (i % 10 == 0 ? " monthly report" : " list");
  return "(" + Num(t.id) + ", " + Quote(t.tenant) + ", " + Quote(t.app) + ", " + Quote(t.user) +
         ", " + Quote(t.type) + ", " + Quote(name) + ", 'XLSX', '{}', " + Quote("h" + Num(t.id)) +
         ", " + Quote(t.status) + ", " + (file ? Quote("export-" + Num(t.id) + ".xlsx") : "NULL") +
         ", " + (t.status == "SUCCEEDED" ? Quote("k/" + Num(t.id)) : "NULL") + ", " +
         opt(file, 4096 + t.id % 100000) + ", " + opt(file, 1000 + t.id % 50000) + ", " +
         Num(file ? 1000 + t.id % 50000 : 0) + ", " +
         (t.failure_code.empty() ? "NULL" : Quote(t.failure_code)) + ", " +
         (t.failure_code.empty() ? "NULL" : Quote("the export failed")) + ", 1, " +
         Num(started ? 1 : 0) + ", 3, " + Num(t.requested_at) + ", " +
         (t.status == "RUNNING" ? Quote("w1") : "NULL") + ", " +
         opt(t.status == "RUNNING", t.requested_at + 300000) + ", " + Num(t.requested_at) + ", " +
         opt(started, t.started_at) + ", " + opt(t.ended && started, t.completed_at) + ", " +
         opt(file, t.expires_at) + ", " + Num(t.updated_at) + ")";
}

constexpr char kTaskInsert[] =
    "INSERT INTO export_task (id, tenant_id, app_code, requested_by, export_type, task_name,"
    " format, parameters_json, params_hash, status, file_name, object_key, size_bytes,"
    " total_rows, processed_rows, failure_code, failure_message, dispatch_version,"
    " attempt_count, max_attempts, next_retry_at, lease_owner, lease_until, requested_at,"
    " started_at, completed_at, expires_at, updated_at) VALUES ";

}  // namespace

Status SeedHistory(store::Database& db, const HistoryShape& s, int64_t now_ms,
                   const std::function<void(int64_t)>& progress) {
  const int64_t event_base = s.tasks + 1;
  const int64_t audit_base = event_base + s.tasks * std::max(s.events_per_task, 0) + 1;
  for (int64_t start = 0; start < s.tasks; start += kRowsPerTransaction) {
    const int64_t end = std::min(s.tasks, start + kRowsPerTransaction);
    Status status = db.WithTransaction(store::TxMode::kWrite, [&](store::Connection& c) -> Status {
      std::string tasks, events, audits;
      int64_t n_tasks = 0, n_events = 0, n_audits = 0;
      auto flush = [&](std::string* sql, int64_t* n, bool force) -> Status {
        if (*n == 0 || (!force && *n < kRowsPerStatement)) return Status::Ok();
        Status st = c.Exec(*sql).status();
        sql->clear();
        *n = 0;
        return st;
      };
      for (int64_t i = start; i < end; ++i) {
        const SeedTask t = MakeTask(s, i, now_ms);
        tasks += (n_tasks == 0 ? std::string(kTaskInsert) : std::string(", ")) + TaskValues(t, i);
        ++n_tasks;
        for (int e = 0; e < s.events_per_task; ++e) {
          const int64_t at = std::min(t.requested_at + e * 1000, t.updated_at);
          events += (n_events == 0 ? std::string("INSERT INTO export_task_event (id, task_id,"
                                                 " dispatch_version, kind, details_json,"
                                                 " created_at) VALUES ")
                                   : std::string(", ")) +
                    "(" + Num(event_base + i * s.events_per_task + e) + ", " + Num(t.id) + ", 1, " +
                    Quote(e == 0 ? "CREATED" : "PROGRESS") + ", '{}', " + Num(at) + ")";
          ++n_events;
        }
        if (s.downloads_every > 0 && t.tenant == "t1" && t.has_file && i % s.downloads_every == 0) {
          audits += (n_audits == 0 ? std::string("INSERT INTO export_download_audit (id, task_id,"
                                                 " tenant_id, app_code, user_id, export_type,"
                                                 " via, served_by, client_address, user_agent,"
                                                 " request_id, downloaded_at) VALUES ")
                                   : std::string(", ")) +
                    "(" + Num(audit_base + i) + ", " + Num(t.id) + ", " + Quote(t.tenant) + ", " +
                    Quote(t.app) + ", " + Quote(t.user) + ", " + Quote(t.type) +
                    ", 'DIRECT', 'STREAM', '127.0.0.1', 'seed', " + Quote("r" + Num(t.id)) + ", " +
                    Num(t.completed_at + 60000) + ")";
          ++n_audits;
        }
        EC_RETURN_IF_ERROR(flush(&tasks, &n_tasks, false));
        EC_RETURN_IF_ERROR(flush(&events, &n_events, false));
        EC_RETURN_IF_ERROR(flush(&audits, &n_audits, false));
      }
      EC_RETURN_IF_ERROR(flush(&tasks, &n_tasks, true));
      EC_RETURN_IF_ERROR(flush(&events, &n_events, true));
      return flush(&audits, &n_audits, true);
    });
    if (!status.ok()) return status.WithContext("seeding tasks " + Num(start) + ".." + Num(end));
    if (progress) progress(end);
  }
  return AnalyzeHistory(db);
}

Status AnalyzeHistory(store::Database& db) {
  const std::string& kind = db.dialect().name;
  if (kind == "mysql") {
    return db.Query("ANALYZE TABLE export_task, export_task_event, export_download_audit").status();
  }
  // PostgreSQL reads an index alone only for pages its visibility map marks
  // all-visible, which autovacuum does to a long history; a freshly seeded
  // one is vacuumed here so the plans are those of a real history.
  return db.Exec(kind == "postgres" ? "VACUUM ANALYZE" : "ANALYZE").status();
}

}  // namespace export_center::testing
