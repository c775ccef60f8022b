#include "store/migrations.h"

#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>

#ifndef EXPORT_CENTER_RELEASE
#error "EXPORT_CENTER_RELEASE (the project VERSION) is set by src/store/CMakeLists.txt"
#endif

namespace export_center::store {
namespace {

// compatible_from: the oldest release that works with the row's migration
// (migrations.h). A table made by 0.9.0 lacks the column: kAddCompatibleFrom
// adds it and Migrate() fills it in for the rows 0.9.0 wrote.
constexpr char kCreateVersionTable[] =
    "CREATE TABLE IF NOT EXISTS export_schema_version ("
    " version INTEGER NOT NULL PRIMARY KEY,"
    " description VARCHAR(200) NOT NULL,"
    " applied_at BIGINT NOT NULL,"
    " compatible_from VARCHAR(32) NULL){TABLE_OPTIONS}";
constexpr char kAddCompatibleFrom[] =
    "ALTER TABLE export_schema_version ADD COLUMN IF NOT EXISTS compatible_from VARCHAR(32) NULL";

// Version 1: export_task, export_outbox and export_task_guard as described in
// docs/store.md#schema-migration-1. Times are BIGINT epoch ms written with {NOW}.
Migration InitialSchema() {
  return {
      1,
      "export_task, export_outbox, export_task_guard",
      {
          "CREATE TABLE IF NOT EXISTS export_task ("
          " id BIGINT NOT NULL PRIMARY KEY,"
          " tenant_id VARCHAR(64) NOT NULL,"
          " app_code VARCHAR(16) NOT NULL,"
          " requested_by VARCHAR(128) NOT NULL,"
          " export_type VARCHAR(128) NOT NULL,"
          " task_name VARCHAR(400) NOT NULL,"
          " format VARCHAR(8) NOT NULL,"
          " parameters_json {TEXT} NOT NULL,"
          " params_hash VARCHAR(64) NOT NULL,"
          " status VARCHAR(24) NOT NULL,"
          " file_name VARCHAR(512) NULL,"
          " object_key VARCHAR(512) NULL,"
          " content_type VARCHAR(128) NULL,"
          " size_bytes BIGINT NULL,"
          " total_rows BIGINT NULL,"
          " processed_rows BIGINT NOT NULL DEFAULT 0,"
          " failure_code VARCHAR(64) NULL,"
          " failure_message {TEXT} NULL,"
          " dispatch_version INTEGER NOT NULL DEFAULT 1,"
          " attempt_count INTEGER NOT NULL DEFAULT 0,"
          " max_attempts INTEGER NOT NULL DEFAULT 3,"
          " next_retry_at BIGINT NOT NULL,"
          " lease_owner VARCHAR(128) NULL,"
          " lease_until BIGINT NULL,"
          " last_heartbeat_at BIGINT NULL,"
          " execution_deadline_at BIGINT NULL,"
          " cancel_requested INTEGER NOT NULL DEFAULT 0,"
          " contract_version VARCHAR(128) NULL,"
          " download_count BIGINT NOT NULL DEFAULT 0,"
          " last_downloaded_at BIGINT NULL,"
          " requested_at BIGINT NOT NULL,"
          " started_at BIGINT NULL,"
          " completed_at BIGINT NULL,"
          " expires_at BIGINT NULL,"
          " updated_at BIGINT NOT NULL){TABLE_OPTIONS}",
          "CREATE INDEX IF NOT EXISTS idx_export_task_dispatch"
          " ON export_task (status, next_retry_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_lease ON export_task (status, lease_until)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_owner"
          " ON export_task (tenant_id, requested_by, requested_at)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_dedupe"
          " ON export_task (requested_by, export_type, params_hash)",
          // The orphan-file sweep asks whether a key is still referenced.
          "CREATE INDEX IF NOT EXISTS idx_export_task_object_key ON export_task (object_key)",

          "CREATE TABLE IF NOT EXISTS export_outbox ("
          " id BIGINT NOT NULL PRIMARY KEY,"
          " event_id VARCHAR(64) NOT NULL,"
          " task_id BIGINT NOT NULL,"
          " dispatch_version INTEGER NOT NULL,"
          " topic VARCHAR(128) NOT NULL,"
          " tag VARCHAR(128) NOT NULL,"
          " message_key VARCHAR(64) NOT NULL,"
          " payload_json {TEXT} NOT NULL,"
          " status VARCHAR(24) NOT NULL DEFAULT 'PENDING',"
          " attempt_count INTEGER NOT NULL DEFAULT 0,"
          " next_retry_at BIGINT NOT NULL,"
          " lease_owner VARCHAR(128) NULL,"
          " lease_until BIGINT NULL,"
          " sent_at BIGINT NULL,"
          " last_error {TEXT} NULL,"
          " created_at BIGINT NOT NULL,"
          " updated_at BIGINT NOT NULL){TABLE_OPTIONS}",
          // One command per (task, version) is a database fact: the
          // reconciler's re-inserts are idempotent because of it.
          "CREATE UNIQUE INDEX IF NOT EXISTS uk_export_outbox_event ON export_outbox (event_id)",
          "CREATE UNIQUE INDEX IF NOT EXISTS uk_export_outbox_task_version"
          " ON export_outbox (task_id, dispatch_version)",
          "CREATE INDEX IF NOT EXISTS idx_export_outbox_publish"
          " ON export_outbox (status, next_retry_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_outbox_task"
          " ON export_outbox (task_id, dispatch_version, status, sent_at)",

          "CREATE TABLE IF NOT EXISTS export_task_guard ("
          " name VARCHAR(64) NOT NULL PRIMARY KEY,"
          " created_at BIGINT NOT NULL){TABLE_OPTIONS}",
      },
  };
}

// Version 2: the counter that hands each store its id node
// (docs/store.md#ids). One row; every store takes the next value at start.
Migration IdNodeCounter() {
  return {
      2,
      "export_id_node: the node part of generated ids",
      {
          "CREATE TABLE IF NOT EXISTS export_id_node ("
          " name VARCHAR(64) NOT NULL PRIMARY KEY,"
          " next_node BIGINT NOT NULL,"
          " updated_at BIGINT NOT NULL){TABLE_OPTIONS}",
          "{INSERT_IGNORE} export_id_node (name, next_node, updated_at)"
          " VALUES ('ID_NODE', 0, {NOW}){ON_CONFLICT_IGNORE}",
      },
  };
}

// Version 3: the notification outbox (docs/notifications.md): one row per
// (ended task event, receiver), written in the transaction of the end state.
Migration NotificationOutbox() {
  return {
      3,
      "export_notification: webhook notifications of ended tasks",
      {
          "CREATE TABLE IF NOT EXISTS export_notification ("
          " id BIGINT NOT NULL PRIMARY KEY,"
          " event_id VARCHAR(64) NOT NULL,"
          " receiver_id VARCHAR(64) NOT NULL,"
          " task_id BIGINT NOT NULL,"
          " dispatch_version INTEGER NOT NULL,"
          " task_status VARCHAR(24) NOT NULL,"
          " payload_json {TEXT} NOT NULL,"
          " status VARCHAR(24) NOT NULL DEFAULT 'PENDING',"
          " attempt_count INTEGER NOT NULL DEFAULT 0,"
          " next_retry_at BIGINT NOT NULL,"
          " lease_owner VARCHAR(128) NULL,"
          " lease_until BIGINT NULL,"
          " delivered_at BIGINT NULL,"
          " last_error {TEXT} NULL,"
          " created_at BIGINT NOT NULL,"
          " updated_at BIGINT NOT NULL){TABLE_OPTIONS}",
          "CREATE UNIQUE INDEX IF NOT EXISTS uk_export_notification_event"
          " ON export_notification (event_id, receiver_id)",
          // One event per (task, version, end state) and receiver, as a
          // database fact: writing it twice inserts nothing.
          "CREATE UNIQUE INDEX IF NOT EXISTS uk_export_notification_end"
          " ON export_notification (task_id, dispatch_version, task_status, receiver_id)",
          "CREATE INDEX IF NOT EXISTS idx_export_notification_due"
          " ON export_notification (status, next_retry_at, id)",
      },
  };
}

constexpr char kInsertGuardRow[] =
    "{INSERT_IGNORE} export_task_guard (name, created_at)"
    " VALUES ('GLOBAL_CREATE', {NOW}){ON_CONFLICT_IGNORE}";

// Runs `fn` in one write transaction under the dialect's migration lock, so
// concurrent processes migrate one at a time.
Status WithMigrationLock(Database& db, const std::function<Status(Connection&)>& fn) {
  const Dialect& d = db.dialect();
  return db.WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
    if (d.migration_lock.empty()) return fn(c);
    EC_ASSIGN_OR_RETURN(Rows lock, c.Query(d.migration_lock));
    if (!lock.empty() && lock[0].Text(0) == "0") {
      return Unavailable("another process has held the migration lock for a minute; try again");
    }
    Status status = fn(c);
    if (!d.migration_unlock.empty()) {
      Status unlocked = c.Query(d.migration_unlock).status();
      if (status.ok()) status = unlocked;
    }
    return status;
  });
}

// "CREATE [UNIQUE] INDEX IF NOT EXISTS name ON table (...)", the only shape
// of index statement the migrations use.
struct IndexStatement {
  std::string table;
  std::string name;
  std::string without_if_not_exists;
};
std::optional<IndexStatement> ParseCreateIndex(const std::string& statement) {
  static const std::regex kCreateIndex(
      R"(^(CREATE (UNIQUE )?INDEX )IF NOT EXISTS ([A-Za-z0-9_]+) ON ([A-Za-z0-9_]+)(.*)$)");
  std::smatch m;
  if (!std::regex_match(statement, m, kCreateIndex)) return std::nullopt;
  return IndexStatement{m[4], m[3], m[1].str() + m[3].str() + " ON " + m[4].str() + m[5].str()};
}

// "DROP INDEX IF EXISTS name ON table", the only shape of drop the
// migrations use; MySQL needs the table, SQLite and PostgreSQL refuse it.
struct DropIndexStatement {
  std::string table;
  std::string name;
};
std::optional<DropIndexStatement> ParseDropIndex(const std::string& statement) {
  static const std::regex kDropIndex(
      R"(^DROP INDEX IF EXISTS ([A-Za-z0-9_]+) ON ([A-Za-z0-9_]+)$)");
  std::smatch m;
  if (!std::regex_match(statement, m, kDropIndex)) return std::nullopt;
  return DropIndexStatement{m[2], m[1]};
}

Status DropIndex(Connection& c, const Dialect& d, const DropIndexStatement& drop) {
  if (d.name != "mysql") return c.Exec("DROP INDEX IF EXISTS " + drop.name).status();
  if (d.index_exists_query.empty()) {  // MariaDB: IF EXISTS, with the table
    return c.Exec("DROP INDEX IF EXISTS " + drop.name + " ON " + drop.table).status();
  }
  // MySQL 8 has no DROP INDEX IF EXISTS: look the index up.
  EC_ASSIGN_OR_RETURN(Rows rows, c.Query(d.index_exists_query, {drop.table, drop.name}));
  if (rows.at(0).Int(0) == 0) return Status::Ok();
  return c.Exec("DROP INDEX " + drop.name + " ON " + drop.table).status();
}

// "ALTER TABLE table ADD COLUMN IF NOT EXISTS column …", the only shape of
// added column the migrations use. SQLite and MySQL 8 lack the IF NOT EXISTS
// (PostgreSQL and MariaDB have it): there the column is looked up first.
struct AddColumnStatement {
  std::string table;
  std::string column;
  std::string without_if_not_exists;
};
std::optional<AddColumnStatement> ParseAddColumn(const std::string& statement) {
  static const std::regex kAddColumn(
      R"(^(ALTER TABLE ([A-Za-z0-9_]+) ADD COLUMN )IF NOT EXISTS (([A-Za-z0-9_]+).*)$)");
  std::smatch m;
  if (!std::regex_match(statement, m, kAddColumn)) return std::nullopt;
  return AddColumnStatement{m[2], m[4], m[1].str() + m[3].str()};
}

Status AddColumn(Connection& c, const Dialect& d, const AddColumnStatement& add,
                 const std::string& sql) {
  if (d.column_exists_query.empty()) return c.Exec(sql).status();
  EC_ASSIGN_OR_RETURN(Rows rows, c.Query(d.column_exists_query, {add.table, add.column}));
  if (rows.at(0).Int(0) > 0) return Status::Ok();
  return c.Exec(add.without_if_not_exists).status();
}

// One DDL statement. Where the database lacks CREATE INDEX IF NOT EXISTS
// (MySQL 8), an existing index is looked up instead, so a migration cut short
// by a crash can run again.
Status RunStatement(Connection& c, const Dialect& d, const std::string& statement) {
  std::string sql = d.Expand(statement);
  if (std::optional<DropIndexStatement> drop = ParseDropIndex(sql)) return DropIndex(c, d, *drop);
  if (std::optional<AddColumnStatement> add = ParseAddColumn(sql))
    return AddColumn(c, d, *add, sql);
  if (!d.index_exists_query.empty()) {
    if (std::optional<IndexStatement> index = ParseCreateIndex(sql)) {
      EC_ASSIGN_OR_RETURN(Rows rows, c.Query(d.index_exists_query, {index->table, index->name}));
      if (rows.at(0).Int(0) > 0) return Status::Ok();
      sql = index->without_if_not_exists;
    }
  }
  return c.Exec(sql).status();
}

Status Apply(Database& db, const Migration& m) {
  const Dialect& d = db.dialect();
  return WithMigrationLock(db, [&](Connection& c) -> Status {
    // Another process may have applied it while we waited for the lock.
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query("SELECT COUNT(*) FROM export_schema_version"
                                           " WHERE version = ?",
                                           {m.version}));
    if (rows.at(0).Int(0) > 0) return Status::Ok();
    for (const std::string& statement : m.statements) {
      Status s = RunStatement(c, d, statement);
      if (!s.ok()) return s.WithContext("migration " + std::to_string(m.version));
    }
    return c
        .Exec(d.Expand("INSERT INTO export_schema_version"
                       " (version, description, applied_at, compatible_from)"
                       " VALUES (?, ?, {NOW}, ?)"),
              {m.version, m.description, m.compatible_from})
        .status();
  });
}

// Adds compatible_from to a version table an older release made, and records
// it for the migrations that release applied (they are this binary's too).
Status RecordCompatibleFrom(Database& db) {
  const Dialect& d = db.dialect();
  return WithMigrationLock(db, [&](Connection& c) -> Status {
    EC_RETURN_IF_ERROR(RunStatement(c, d, kAddCompatibleFrom));
    EC_ASSIGN_OR_RETURN(
        Rows missing,
        c.Query("SELECT version FROM export_schema_version WHERE compatible_from IS NULL"));
    for (const Row& row : missing) {
      for (const Migration& m : AllMigrations()) {
        if (m.version != row.Int(0)) continue;
        EC_RETURN_IF_ERROR(c.Exec("UPDATE export_schema_version SET compatible_from = ?"
                                  " WHERE version = ? AND compatible_from IS NULL",
                                  {m.compatible_from, m.version})
                               .status());
      }
    }
    return Status::Ok();
  });
}

// The numbers of "MAJOR.MINOR.PATCH"; a part that is missing or not a number is 0.
std::vector<int> ReleaseParts(std::string_view release) {
  std::vector<int> parts;
  while (parts.size() < 3) {
    size_t dot = release.find('.');
    std::string_view part = release.substr(0, dot);
    int n = 0;
    std::from_chars(part.data(), part.data() + part.size(), n);
    parts.push_back(n);
    if (dot == std::string_view::npos) {
      release = {};
    } else {
      release.remove_prefix(dot + 1);
    }
  }
  return parts;
}

// Version 4: live task events poll "updated_at > ?" once a second per process
// (docs/http-api.md#get-export-tasksevents--task-events); without an index that is a full scan.
Migration TaskUpdatedAtIndex() {
  return {
      4,
      "export_task (updated_at) index for task events",
      {"CREATE INDEX IF NOT EXISTS idx_export_task_updated_at ON export_task (updated_at)"},
  };
}

// Version 5: one row per counted download (docs/store.md#download-audit).
// Copies tenant, app and type from the task so the audit outlives it; no
// foreign key, for the same reason.
Migration DownloadAudit() {
  return {
      5,
      "export_download_audit: who downloaded which file, when, how",
      {
          "CREATE TABLE IF NOT EXISTS export_download_audit ("
          " id BIGINT NOT NULL PRIMARY KEY,"
          " task_id BIGINT NOT NULL,"
          " tenant_id VARCHAR(64) NOT NULL,"
          " app_code VARCHAR(16) NOT NULL,"
          " user_id VARCHAR(128) NOT NULL,"
          " export_type VARCHAR(128) NOT NULL,"
          " via VARCHAR(24) NOT NULL,"
          " served_by VARCHAR(24) NOT NULL,"
          " client_address VARCHAR(64) NOT NULL,"
          " user_agent VARCHAR(512) NOT NULL,"
          " request_id VARCHAR(64) NOT NULL,"
          " downloaded_at BIGINT NOT NULL){TABLE_OPTIONS}",
          // The admin query: one tenant and app, newest first, optionally one task.
          "CREATE INDEX IF NOT EXISTS idx_export_download_audit_tenant"
          " ON export_download_audit (tenant_id, app_code, downloaded_at)",
          "CREATE INDEX IF NOT EXISTS idx_export_download_audit_task"
          " ON export_download_audit (task_id, downloaded_at)",
      },
  };
}

// Version 6: the live task events page through changes by the key
// (updated_at, id) (docs/http-api.md#get-export-tasksevents--task-events):
// the index of version 4 leaves the id order of one millisecond's changes to
// a sort, and is dropped (InnoDB already appended the primary key to it).
Migration TaskChangeKeyIndex() {
  return {
      6,
      "export_task (updated_at, id) index for keyset paging of task events",
      {
          "CREATE INDEX IF NOT EXISTS idx_export_task_change_key ON export_task (updated_at, id)",
          "DROP INDEX IF EXISTS idx_export_task_updated_at ON export_task",
      },
  };
}

// Version 7: when an unsent outbox row first became due
// (docs/observability.md#metrics). next_retry_at moves on with every failed
// send, so the outbox age measured from it stayed below one back-off during
// a broker outage and its alert could not fire; due_since stays put until
// the command is delivered. Rows already waiting start from next_retry_at.
Migration OutboxDueSince() {
  return {
      7,
      "export_outbox.due_since: when the unsent row first became due",
      {
          "ALTER TABLE export_outbox ADD COLUMN IF NOT EXISTS due_since BIGINT NULL",
          "UPDATE export_outbox SET due_since = next_retry_at WHERE due_since IS NULL",
      },
  };
}

// Version 8: the file's manifest (docs/task-lifecycle.md#the-files-manifest).
// Tasks that succeeded before it have none; their JSON leaves it out.
Migration FileManifest() {
  return {
      8,
      "export_task.file_sha256, part_rows: the file's manifest",
      {
          "ALTER TABLE export_task ADD COLUMN IF NOT EXISTS file_sha256 VARCHAR(64) NULL",
          "ALTER TABLE export_task ADD COLUMN IF NOT EXISTS part_rows {TEXT} NULL",
      },
  };
}

// Version 9: the task timeline (docs/task-lifecycle.md#the-timeline): one row
// per state change or dispatch event, written in the transaction of the
// change; capped per task. No foreign key, like the download audit: the
// store writes and removes them with the task itself.
Migration TaskTimeline() {
  return {
      9,
      "export_task_event: the timeline of each task",
      {
          "CREATE TABLE IF NOT EXISTS export_task_event ("
          " id BIGINT NOT NULL PRIMARY KEY,"
          " task_id BIGINT NOT NULL,"
          " dispatch_version INTEGER NOT NULL,"
          " kind VARCHAR(32) NOT NULL,"
          " details_json {TEXT} NOT NULL,"
          " created_at BIGINT NOT NULL){TABLE_OPTIONS}",
          // The timeline read, the cap's count and the progress sampling.
          "CREATE INDEX IF NOT EXISTS idx_export_task_event_task"
          " ON export_task_event (task_id, created_at, id)",
      },
  };
}

// Version 10: the column policy decided at create
// (docs/configuration.md#column-governance-columns), so every attempt of the
// task writes the same columns. Tasks created before have none: NULL.
Migration ColumnPolicy() {
  return {
      10,
      "export_task.column_policy_json: the governed columns decided at create",
      {"ALTER TABLE export_task ADD COLUMN IF NOT EXISTS column_policy_json {TEXT} NULL"},
  };
}

// Version 11: the audit of the operators' bulk actions (docs/store.md#operators-console):
// who, which action, the filter, how many tasks it matched and what became of
// them. scope_tenant is NULL for an action over every tenant. The console's
// figures and searches read windows of requested_at: its index too.
Migration BulkActionAudit() {
  return {
      11,
      "export_bulk_action: the audit of operators' bulk actions; export_task (requested_at)",
      {
          "CREATE TABLE IF NOT EXISTS export_bulk_action ("
          " id BIGINT NOT NULL PRIMARY KEY,"
          " actor VARCHAR(128) NOT NULL,"
          " actor_tenant VARCHAR(64) NOT NULL,"
          " scope_tenant VARCHAR(64) NULL,"
          " action VARCHAR(16) NOT NULL,"
          " filter_json {TEXT} NOT NULL,"
          " matched BIGINT NOT NULL,"
          " succeeded BIGINT NOT NULL,"
          " skipped BIGINT NOT NULL,"
          " failed BIGINT NOT NULL,"
          " outcome VARCHAR(16) NOT NULL,"
          " first_error {TEXT} NULL,"
          " started_at BIGINT NOT NULL,"
          " finished_at BIGINT NULL){TABLE_OPTIONS}",
          "CREATE INDEX IF NOT EXISTS idx_export_bulk_action_scope"
          " ON export_bulk_action (scope_tenant, started_at)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_requested_at ON export_task (requested_at)",
      },
  };
}

// Version 12: the app a bulk action was scoped to (docs/store.md#operators-console),
// so a tenant's operator of one app lists only that app's actions. NULL for
// an action over every app of its tenant (or every tenant), and for the rows
// written before: those are listed only to operate-all.
Migration BulkActionApp() {
  return {
      12,
      "export_bulk_action.scope_app: the app a bulk action was scoped to",
      {"ALTER TABLE export_bulk_action ADD COLUMN IF NOT EXISTS scope_app VARCHAR(16) NULL"},
  };
}

// Version 13: the operator's detail of a failure (docs/store.md#schema-migration-1):
// the full text behind the classified failure_message the user sees, shown
// only in the operators' console. Tasks that failed before have none: NULL.
Migration FailureDetail() {
  return {
      13,
      "export_task.failure_detail: the operators' text of a failure",
      {"ALTER TABLE export_task ADD COLUMN IF NOT EXISTS failure_detail {TEXT} NULL"},
  };
}

// Version 14: subscriptions (docs/subscriptions.md#the-ledger) and the record
// of their runs. A run's key is (subscription, slot): the fleet fires a slot
// once because only one claim can insert it (subscription_ledger.h).
Migration Subscriptions() {
  return {
      14,
      "export_subscription, export_subscription_run: scheduled exports and their runs",
      {
          "CREATE TABLE IF NOT EXISTS export_subscription ("
          " id BIGINT NOT NULL PRIMARY KEY,"
          " tenant_id VARCHAR(64) NOT NULL,"
          " app_code VARCHAR(16) NOT NULL,"
          " owner VARCHAR(128) NOT NULL,"
          " export_type VARCHAR(128) NOT NULL,"
          " format VARCHAR(8) NOT NULL,"
          " task_name VARCHAR(400) NOT NULL,"
          " parameters_json {TEXT} NOT NULL,"
          " cron VARCHAR(200) NOT NULL,"
          " time_zone VARCHAR(64) NOT NULL,"
          " business_days_only INTEGER NOT NULL,"
          " delivery_json {TEXT} NOT NULL,"
          " state VARCHAR(16) NOT NULL,"
          " pause_reason VARCHAR(32) NULL,"
          " pause_detail {TEXT} NULL,"
          " consecutive_failures INTEGER NOT NULL,"
          " next_slot_at BIGINT NULL,"
          " last_slot_at BIGINT NULL,"
          " version INTEGER NOT NULL,"
          " created_at BIGINT NOT NULL,"
          " updated_at BIGINT NOT NULL){TABLE_OPTIONS}",
          // The scheduler's due scan, and the owner's and the tenant's lists and caps.
          "CREATE INDEX IF NOT EXISTS idx_export_subscription_due"
          " ON export_subscription (state, next_slot_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_subscription_owner"
          " ON export_subscription (tenant_id, owner, id)",
          "CREATE TABLE IF NOT EXISTS export_subscription_run ("
          " subscription_id BIGINT NOT NULL,"
          " slot_at BIGINT NOT NULL,"
          " outcome VARCHAR(16) NOT NULL,"
          " task_id BIGINT NULL,"
          " instance VARCHAR(128) NOT NULL,"
          " lease_until BIGINT NULL,"
          " claims INTEGER NOT NULL,"
          " detail {TEXT} NULL,"
          " fired_at BIGINT NOT NULL,"
          " updated_at BIGINT NOT NULL,"
          " PRIMARY KEY (subscription_id, slot_at)){TABLE_OPTIONS}",
          // Expired claims, and the history's retention.
          "CREATE INDEX IF NOT EXISTS idx_export_subscription_run_lease"
          " ON export_subscription_run (outcome, lease_until)",
          "CREATE INDEX IF NOT EXISTS idx_export_subscription_run_fired"
          " ON export_subscription_run (fired_at)",
      },
  };
}

// Version 15: the requester's language recorded at create (task::Task::locale,
// docs/store.md#schema-migration-1). '' for the tasks created before: the
// definition's default language, as they were written.
Migration TaskLocale() {
  return {
      15,
      "export_task.locale: the requester's language",
      {"ALTER TABLE export_task ADD COLUMN IF NOT EXISTS locale VARCHAR(35) NOT NULL DEFAULT ''"},
  };
}

// Version 16: password-protected files
// (docs/configuration.md#password-protected-files-file-password): whether the task's file is
// encrypted, and the file key material derived from the requester's password, wrapped under a
// key-encryption key, with that key's id. The wrapped material is erased (NULL) when the task ends;
// file_encrypted stays. Tasks created before are plain: 0.
Migration FileEncryption() {
  return {
      16,
      "export_task.file_encrypted, file_key_id, file_key_wrapped: password-protected files",
      {"ALTER TABLE export_task ADD COLUMN IF NOT EXISTS file_encrypted INTEGER NOT NULL"
       " DEFAULT 0",
       "ALTER TABLE export_task ADD COLUMN IF NOT EXISTS file_key_id VARCHAR(64) NULL",
       "ALTER TABLE export_task ADD COLUMN IF NOT EXISTS file_key_wrapped {TEXT} NULL"},
  };
}

// Version 17: an index in the order of every list shape of a long history
// (docs/store.md#indexes-of-history): newest first by (requested_at, id) for
// the user's and the tenant's list, each bare and by status and by type, the
// operators' search by each of its filters (with or without a tenant), the
// expiry's scan, and the download audit by (downloaded_at, id). Checked on
// every backend by tests/store/history_plan_test.cc. Three indexes give way
// to one with id appended (SQLite and PostgreSQL need it for the tie-break;
// InnoDB has it implicitly).
Migration HistoryIndexes() {
  return {
      17,
      "export_task, export_download_audit: indexes in the order of every list of history",
      {
          "CREATE INDEX IF NOT EXISTS idx_export_task_user_list"
          " ON export_task (tenant_id, app_code, requested_by, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_user_status"
          " ON export_task (tenant_id, app_code, requested_by, status, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_user_type"
          " ON export_task (tenant_id, app_code, requested_by, export_type, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_tenant_list"
          " ON export_task (tenant_id, app_code, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_tenant_status"
          " ON export_task (tenant_id, app_code, status, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_tenant_type"
          " ON export_task (tenant_id, app_code, export_type, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_owner_key"
          " ON export_task (tenant_id, requested_by, requested_at, id)",
          "DROP INDEX IF EXISTS idx_export_task_owner ON export_task",
          "CREATE INDEX IF NOT EXISTS idx_export_task_tenant_any_app"
          " ON export_task (tenant_id, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_requested_key"
          " ON export_task (requested_at, id)",
          "DROP INDEX IF EXISTS idx_export_task_requested_at ON export_task",
          "CREATE INDEX IF NOT EXISTS idx_export_task_status_requested"
          " ON export_task (status, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_type_requested"
          " ON export_task (export_type, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_failure_requested"
          " ON export_task (failure_code, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_requester"
          " ON export_task (requested_by, requested_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_task_expiry"
          " ON export_task (status, expires_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_download_audit_list"
          " ON export_download_audit (tenant_id, app_code, downloaded_at, id)",
          "DROP INDEX IF EXISTS idx_export_download_audit_tenant ON export_download_audit",
          "CREATE INDEX IF NOT EXISTS idx_export_download_audit_user"
          " ON export_download_audit (tenant_id, app_code, user_id, downloaded_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_download_audit_task_key"
          " ON export_download_audit (task_id, downloaded_at, id)",
          "DROP INDEX IF EXISTS idx_export_download_audit_task ON export_download_audit",
      },
  };
}

// Version 18 (issue 46, second pass): the stats' windows and a type's bulk
// count read only indexes. Each index that serves them gives way to one with
// the same leading columns and the columns those statements read appended,
// so the window's rows, each type's percentiles and an exact count of a
// type's states never look a row up in the table
// (docs/store.md#indexes-of-history).
Migration HistoryCoveringIndexes() {
  // What the stats read of a window's row; size_bytes, total_rows and
  // failure_code are in the type index too, as SQLite reads a window by type
  // (a skip-scan) to group it without a sort.
  const std::string stats =
      "status, started_at, completed_at, size_bytes, total_rows, failure_code";
  return {
      18,
      "export_task: the stats' windows and a type's bulk count read only indexes",
      {
          "CREATE INDEX IF NOT EXISTS idx_export_task_window ON export_task"
          " (requested_at, id, export_type, " +
              stats + ", tenant_id, app_code)",
          "DROP INDEX IF EXISTS idx_export_task_requested_key ON export_task",
          "CREATE INDEX IF NOT EXISTS idx_export_task_tenant_window ON export_task"
          " (tenant_id, requested_at, id, app_code, export_type, " +
              stats + ")",
          "DROP INDEX IF EXISTS idx_export_task_tenant_any_app ON export_task",
          "CREATE INDEX IF NOT EXISTS idx_export_task_tenant_app_window ON export_task"
          " (tenant_id, app_code, requested_at, id, export_type, " +
              stats + ")",
          "DROP INDEX IF EXISTS idx_export_task_tenant_list ON export_task",
          "CREATE INDEX IF NOT EXISTS idx_export_task_type_window ON export_task"
          " (export_type, requested_at, id, " +
              stats + ", tenant_id, app_code)",
          "DROP INDEX IF EXISTS idx_export_task_type_requested ON export_task",
          "CREATE INDEX IF NOT EXISTS idx_export_task_tenant_type_window ON export_task"
          " (tenant_id, app_code, export_type, requested_at, id, " +
              stats + ")",
          "DROP INDEX IF EXISTS idx_export_task_tenant_type ON export_task",
          "CREATE INDEX IF NOT EXISTS idx_export_task_user_type_status ON export_task"
          " (tenant_id, app_code, requested_by, export_type, requested_at, id, status)",
          "DROP INDEX IF EXISTS idx_export_task_user_type ON export_task",
      },
  };
}

// Version 19 (issue 48, delivery): the mail outbox (store/mail_outbox.h,
// docs/subscriptions.md#delivery): one row per e-mail, claimed with a lease
// like export_notification; the Message-ID is fixed at enqueue so every retry
// sends the same message.
Migration MailOutbox() {
  return {
      19,
      "export_mail: e-mails waiting to be sent (subscriptions' delivery)",
      {
          "CREATE TABLE IF NOT EXISTS export_mail ("
          " id BIGINT NOT NULL PRIMARY KEY,"
          " message_id VARCHAR(128) NOT NULL,"
          " subscription_id BIGINT NULL,"
          " task_id BIGINT NULL,"
          " recipients {TEXT} NOT NULL,"
          " subject {TEXT} NOT NULL,"
          " body_text {TEXT} NOT NULL,"
          " body_html {TEXT} NULL,"
          " attachment_key VARCHAR(1024) NULL,"
          " attachment_name VARCHAR(400) NULL,"
          " attachment_type VARCHAR(128) NULL,"
          " status VARCHAR(16) NOT NULL DEFAULT 'PENDING',"
          " attempt_count INTEGER NOT NULL DEFAULT 0,"
          " next_retry_at BIGINT NOT NULL,"
          " lease_owner VARCHAR(128) NULL,"
          " lease_until BIGINT NULL,"
          " delivered_at BIGINT NULL,"
          " last_error {TEXT} NULL,"
          " created_at BIGINT NOT NULL,"
          " updated_at BIGINT NOT NULL){TABLE_OPTIONS}",
          // The mailer's due scan, and the console's dead list.
          "CREATE INDEX IF NOT EXISTS idx_export_mail_due"
          " ON export_mail (status, next_retry_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_mail_subscription"
          " ON export_mail (subscription_id, id)",
      },
  };
}

// Version 20 (issue 48, the subscriptions' API): the owner's permission
// snapshot a run creates with (refreshed whenever the owner calls a
// subscription route), the schedule as the owner sent it (a preset, shown
// back) and the tasks' language. Only adds, nullable: 1.1.0 reads on.
Migration SubscriptionOwnerPerms() {
  return {
      20,
      "export_subscription: the owner's permission snapshot, the schedule as sent, the locale",
      {
          "ALTER TABLE export_subscription ADD COLUMN IF NOT EXISTS owner_perms {TEXT} NULL",
          "ALTER TABLE export_subscription ADD COLUMN IF NOT EXISTS schedule_json {TEXT} NULL",
          "ALTER TABLE export_subscription ADD COLUMN IF NOT EXISTS locale VARCHAR(40) NULL",
      },
  };
}

// Version 21 (issue 48, delivery): what each run delivered
// (docs/subscriptions.md#what-a-finished-run-delivers). A run's `delivery` is
// NULL until the delivery duty decided it, then MAILED, SKIPPED_EMPTY,
// NOTICE_SENT, NOTICE_SUPPRESSED or NOT_MAILED, written once by a conditional
// update; a subscription's last failure notice (time and slot) holds the
// grace period across the fleet. A caller's Message-ID is a key of
// export_mail_key, so the mail of one run and recipient is written once
// however often a round is repeated;
// the console's dead list and the purge read in index order; and a mail
// carries its recipient's one-click unsubscribe URL (export_mail.list_unsubscribe).
Migration RunDelivery() {
  return {
      21,
      "export_subscription_run.delivery, export_subscription.failure_notice_at, export_mail_key,"
      " export_mail indexes, export_mail.list_unsubscribe: what a finished run delivers",
      {
          "ALTER TABLE export_subscription_run ADD COLUMN IF NOT EXISTS delivery VARCHAR(24) NULL",
          "ALTER TABLE export_subscription_run"
          " ADD COLUMN IF NOT EXISTS delivery_detail {TEXT} NULL",
          "CREATE INDEX IF NOT EXISTS idx_export_subscription_run_delivery"
          " ON export_subscription_run (delivery, outcome, fired_at)",
          "ALTER TABLE export_subscription ADD COLUMN IF NOT EXISTS failure_notice_at BIGINT NULL",
          "ALTER TABLE export_subscription"
          " ADD COLUMN IF NOT EXISTS failure_notice_slot BIGINT NULL",
          // A new table keyed by the Message-ID (not a unique index on
          // export_mail: the compatibility rule adds no unique key to a table
          // a release in support writes).
          "CREATE TABLE IF NOT EXISTS export_mail_key ("
          " message_id VARCHAR(128) NOT NULL PRIMARY KEY,"
          " mail_id BIGINT NOT NULL,"
          " created_at BIGINT NOT NULL){TABLE_OPTIONS}",
          "CREATE INDEX IF NOT EXISTS idx_export_mail_key_mail ON export_mail_key (mail_id)",
          "CREATE INDEX IF NOT EXISTS idx_export_mail_dead"
          " ON export_mail (status, updated_at, id)",
          "CREATE INDEX IF NOT EXISTS idx_export_mail_delivered"
          " ON export_mail (status, delivered_at, id)",
          // The recipient's one-click unsubscribe URL (List-Unsubscribe).
          "ALTER TABLE export_mail ADD COLUMN IF NOT EXISTS list_unsubscribe {TEXT} NULL",
      },
  };
}

}  // namespace

const std::vector<Migration>& AllMigrations() {
  static const std::vector<Migration> kMigrations = {
      InitialSchema(),  IdNodeCounter(),          NotificationOutbox(), TaskUpdatedAtIndex(),
      DownloadAudit(),  TaskChangeKeyIndex(),     OutboxDueSince(),     FileManifest(),
      TaskTimeline(),   ColumnPolicy(),           BulkActionAudit(),    BulkActionApp(),
      FailureDetail(),  Subscriptions(),          TaskLocale(),         FileEncryption(),
      HistoryIndexes(), HistoryCoveringIndexes(), MailOutbox(),         SubscriptionOwnerPerms(),
      RunDelivery()};
  return kMigrations;
}

int LatestSchemaVersion() { return AllMigrations().back().version; }

std::string_view ThisRelease() { return EXPORT_CENTER_RELEASE; }

int CompareReleases(std::string_view a, std::string_view b) {
  std::vector<int> x = ReleaseParts(a), y = ReleaseParts(b);
  return x < y ? -1 : (y < x ? 1 : 0);
}

StatusOr<std::string> SchemaIncompatibility(Database& db, std::string_view release) {
  EC_ASSIGN_OR_RETURN(Rows applied, db.Query("SELECT version FROM export_schema_version"));
  std::set<int64_t> known;
  for (const Migration& m : AllMigrations()) known.insert(m.version);
  bool any_unknown = false;
  for (const Row& row : applied) any_unknown = any_unknown || known.count(row.Int(0)) == 0;
  // Only a newer release writes a migration this binary does not know, and
  // every release from 1.0.0 on records compatible_from: a table without the
  // column (made and migrated by 0.9.0 alone) is never read for it.
  if (!any_unknown) return std::string();
  EC_ASSIGN_OR_RETURN(Rows rows, db.Query("SELECT version, description, compatible_from"
                                          " FROM export_schema_version"
                                          " WHERE compatible_from IS NOT NULL ORDER BY version"));
  std::optional<Row> worst;
  for (const Row& row : rows) {
    if (CompareReleases(row.Text(2), release) <= 0) continue;
    if (!worst || CompareReleases(row.Text(2), worst->Text(2)) > 0) worst = row;
  }
  if (!worst) return std::string();
  return "the database's schema has migration " + std::to_string(worst->Int(0)) + " (" +
         worst->Text(1) + "), which works only with export-center " + worst->Text(2) +
         " or later; this binary is " + std::string(release) + ": run export-center " +
         worst->Text(2) + " or later against this database";
}

StatusOr<int> CurrentSchemaVersion(Database& db) {
  EC_ASSIGN_OR_RETURN(Rows rows,
                      db.Query("SELECT COALESCE(MAX(version), 0) FROM export_schema_version"));
  return static_cast<int>(rows.at(0).Int(0));
}

Status Migrate(Database& db, std::string_view release) {
  const Dialect& d = db.dialect();
  EC_RETURN_IF_ERROR(WithMigrationLock(
      db, [&](Connection& c) { return c.Exec(d.Expand(kCreateVersionTable)).status(); }));
  EC_ASSIGN_OR_RETURN(std::string incompatible, SchemaIncompatibility(db, release));
  if (!incompatible.empty()) return Conflict(incompatible);
  EC_RETURN_IF_ERROR(RecordCompatibleFrom(db));
  EC_ASSIGN_OR_RETURN(int current, CurrentSchemaVersion(db));
  for (const Migration& m : AllMigrations()) {
    if (m.version > current) EC_RETURN_IF_ERROR(Apply(db, m));
  }
  return db.Exec(d.Expand(kInsertGuardRow)).status();
}

}  // namespace export_center::store
