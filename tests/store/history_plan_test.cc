// A long history stays cheap (issue 46, docs/store.md#indexes-of-history), on
// SQLite, a real PostgreSQL and a real MariaDB, each seeded with tens of
// thousands of tasks in the shape and ANALYZEd:
// - every history statement the store runs (sql::PlannedStatements, the one
//   list the store's own builders make) is planned by the database, and the
//   plan may neither scan export_task, its timeline or the download audit
//   whole nor sort them (a window's rows only, for percentiles);
// - the cursor pages through a list exactly once, in order, ties included;
//   the old `page` agrees with it; totals stop at kExactTotalBound;
// - the retention sweep deletes old ended tasks with their timeline and
//   audit rows, in batches, and nothing else.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/migrations.h"
#include "store/sql_task_queries.h"
#include "store/sql_task_store.h"
#include "store/task_store.h"
#include "store_backends.h"  // beside this file
#include "tests/support/history_seed.h"
#include "tests/support/server_process.h"

namespace export_center::store {
namespace {

using nlohmann::json;

constexpr int64_t kSeededTasks = 20000;
constexpr int64_t kDayMs = 24 * 3600 * 1000LL;

// ---- reading plans ----------------------------------------------------------------------

// A sort the planner expects to be of at most this many rows (PostgreSQL,
// MariaDB give estimates) sorts a small subset, such as one user's failed
// tasks, not the table.
constexpr double kSmallSort = 1000;

// The tables whose whole scan or sort the plans may not contain, by the
// names and aliases the statements give them.
bool IsHistoryTable(const std::string& name) {
  return name == "export_task" || name == "t" || name == "export_task_event" ||
         name == "export_download_audit";
}

struct PlanReading {
  std::string text;                   // the plan, for the failure message
  std::vector<std::string> problems;  // empty: the plan is fine
};

// SQLite: EXPLAIN QUERY PLAN rows "SEARCH t USING INDEX i (a=?)", "SCAN t",
// "USE TEMP B-TREE FOR ORDER BY".
void ReadSqlitePlan(const Rows& rows, const sql::PlannedStatement& s, PlanReading* out) {
  for (const Row& r : rows) {
    const std::string detail = r.Text(r.size() - 1);
    out->text += detail + "\n";
    if (detail.rfind("SCAN ", 0) == 0) {
      std::string object = detail.substr(5);
      if (object.rfind("TABLE ", 0) == 0) object = object.substr(6);
      object = object.substr(0, object.find(' '));
      if (IsHistoryTable(object) && !s.unfiltered) {
        out->problems.push_back("reads the whole table: " + detail);
      }
    }
    const bool reads_task = detail.rfind("SEARCH export_task ", 0) == 0 ||
                            detail.rfind("SCAN export_task ", 0) == 0 ||
                            detail == "SCAN export_task";
    if (s.index_only && reads_task && detail.find("COVERING INDEX") == std::string::npos) {
      out->problems.push_back("reads rows of the table: " + detail);
    }
    if (detail.find("USE TEMP B-TREE") != std::string::npos && !s.sorts_window) {
      out->problems.push_back("sorts: " + detail);
    }
  }
}

// PostgreSQL: EXPLAIN (FORMAT JSON): Seq Scan, an Index Scan without an
// Index Cond (the whole index), Sort.
void ReadPostgresNode(const json& node, const sql::PlannedStatement& s, PlanReading* out,
                      int depth) {
  if (!node.is_object() || depth > 50) return;
  const std::string type = node.value("Node Type", "");
  const std::string table = node.value("Relation Name", "");
  out->text += std::string(depth * 2, ' ') + type + (table.empty() ? "" : " on " + table) +
               (node.contains("Index Name") ? " using " + node.value("Index Name", "") : "") +
               (node.contains("Index Cond") ? " (" + node.value("Index Cond", "") + ")" : "") +
               "\n";
  if (IsHistoryTable(table) && !s.unfiltered) {
    if (type == "Seq Scan") out->problems.push_back("reads the whole table: Seq Scan on " + table);
    if ((type == "Index Scan" || type == "Index Only Scan") && !node.contains("Index Cond")) {
      out->problems.push_back("reads the whole index " + node.value("Index Name", "") + " of " +
                              table);
    }
  }
  // A Bitmap Heap Scan is let pass: PostgreSQL chooses it for a type's bulk
  // count even on a vacuumed table (reading the heap pages in their order,
  // once each); an Index Scan or a Seq Scan reads rows of the table one by one.
  if (s.index_only && table == "export_task" && type != "Index Only Scan" &&
      type != "Bitmap Heap Scan") {
    out->problems.push_back("reads rows of the table: " + type + " on " + table);
  }
  if ((type == "Sort" || type == "Incremental Sort") && !s.sorts_window) {
    // What the planner expects to sort: a few rows (one user's failed
    // tasks) is no sort of the table.
    double input = 1e18;
    if (auto plans = node.find("Plans");
        plans != node.end() && plans->is_array() && !plans->empty()) {
      input = (*plans)[0].value("Plan Rows", 1e18);
    }
    if (input > kSmallSort) {
      out->problems.push_back("sorts: " + type + " of ~" + std::to_string(input) + " rows");
    }
  }
  if (auto plans = node.find("Plans"); plans != node.end() && plans->is_array()) {
    for (const json& child : *plans) ReadPostgresNode(child, s, out, depth + 1);
  }
}

// The rows MariaDB expects its tables under `node` to pass on (rows ×
// filtered %), the largest of them.
double MysqlRowsUnder(const json& node, int depth) {
  if (depth > 50 || !node.is_structured()) return 0;
  double most = 0;
  if (node.is_object() && node.contains("table") && node["table"].is_object()) {
    const json& t = node["table"];
    most = t.value("rows", 0.0) * t.value("filtered", 100.0) / 100.0;
  }
  for (const auto& child : node) most = std::max(most, MysqlRowsUnder(child, depth + 1));
  return most;
}

// MariaDB: EXPLAIN FORMAT=JSON: access_type ALL (the table) or index (the
// whole index), a filesort.
void ReadMysqlNode(const json& node, const sql::PlannedStatement& s, PlanReading* out, int depth) {
  if (depth > 50) return;
  if (node.is_array()) {
    for (const json& child : node) ReadMysqlNode(child, s, out, depth + 1);
    return;
  }
  if (!node.is_object()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == "table" && it->is_object()) {
      const std::string table = it->value("table_name", "");
      const std::string access = it->value("access_type", "");
      out->text += table + ": " + access + " " + it->value("key", "") + "\n";
      if (s.index_only && table == "export_task" && !it->value("using_index", false)) {
        out->problems.push_back("reads rows of the table: " + access + " " + it->value("key", "") +
                                " of " + table);
      }
      if (IsHistoryTable(table) && !s.unfiltered && (access == "ALL" || access == "index")) {
        out->problems.push_back("reads the whole " +
                                std::string(access == "ALL" ? "table" : "index") + " of " + table);
      }
    }
    if ((it.key() == "filesort" ||
         (it.key() == "using_filesort" && it->is_boolean() && it->get<bool>())) &&
        !s.sorts_window && MysqlRowsUnder(node, 0) > kSmallSort) {
      out->problems.push_back("sorts: filesort of ~" + std::to_string(MysqlRowsUnder(node, 0)) +
                              " rows");
    }
    if (it->is_structured()) ReadMysqlNode(*it, s, out, depth + 1);
  }
}

// A scan in the order of the page under a LIMIT reads about 1 / f rows for
// each row it returns, f the share of the table its filter keeps: when f is
// large the planner rightly walks the table (or the order's index) and
// stops early — the big tenant's list through (requested_at, id). Accepted
// when every problem is such a scan and f >= 2% for a page (at most ~50
// rows read per row shown), f >= 50% for a count (a bounded count stops
// after 10 001 rows; an exact bulk count of most of the table reads most of
// it whatever the plan). And the name filter (a substring, which no index
// serves) of a bounded count: the one count that reads the list's rows
// until it has 10 001 matches (docs/store.md#indexes-of-history).
bool ScanStopsEarly(Database& db, const sql::PlannedStatement& s,
                    const std::vector<std::string>& problems) {
  for (const std::string& p : problems) {
    if (p.rfind("reads the whole", 0) != 0) return false;
  }
  const std::string sql = db.dialect().Expand(s.statement.sql);
  const bool count = sql.rfind("SELECT COUNT(*) FROM ", 0) == 0;
  if (sql.find(" LIMIT ") == std::string::npos && !count) return false;
  if (count && sql.find("LIKE") != std::string::npos) return true;
  std::string table;
  for (const char* t : {"export_task", "export_download_audit"}) {
    if (sql.find(std::string(" FROM ") + t + " WHERE ") != std::string::npos) table = t;
  }
  if (table.empty()) return false;
  const size_t where = sql.find(" FROM " + table + " WHERE ") + 6 + table.size();
  size_t end = sql.size();
  for (const char* stop : {" ORDER BY ", " LIMIT ", " GROUP BY "}) {
    end = std::min(end, sql.find(stop, where));
  }
  const std::string filter = sql.substr(where, end - where);
  const auto marks = static_cast<size_t>(std::count(filter.begin(), filter.end(), '?'));
  SqlParams params(s.statement.params.begin(), s.statement.params.begin() + marks);
  auto matching = db.Query("SELECT COUNT(*) FROM " + table + filter, params);
  auto all = db.Query("SELECT COUNT(*) FROM " + table);
  if (!matching.ok() || !all.ok()) return false;
  const double share = static_cast<double>(matching->at(0).Int(0)) /
                       static_cast<double>(std::max<int64_t>(all->at(0).Int(0), 1));
  return share >= (count ? 0.5 : 0.02);
}

StatusOr<PlanReading> ReadPlan(Database& db, const sql::PlannedStatement& s) {
  const std::string& kind = db.dialect().name;
  const std::string sql = db.dialect().Expand(s.statement.sql);
  PlanReading out;
  if (kind == "sqlite") {
    EC_ASSIGN_OR_RETURN(Rows rows, db.Query("EXPLAIN QUERY PLAN " + sql, s.statement.params));
    ReadSqlitePlan(rows, s, &out);
    return out;
  }
  const std::string explain =
      kind == "postgres" ? "EXPLAIN (FORMAT JSON) " : "EXPLAIN FORMAT=JSON ";
  EC_ASSIGN_OR_RETURN(Rows rows, db.Query(explain + sql, s.statement.params));
  std::string text;
  for (const Row& r : rows) text += r.Text(0);
  const json plan = json::parse(text, nullptr, false);
  if (plan.is_discarded()) return Internal("unreadable plan: " + text.substr(0, 200));
  if (kind == "postgres") {
    for (const json& entry : plan) ReadPostgresNode(entry.value("Plan", json()), s, &out, 0);
  } else {
    ReadMysqlNode(plan, s, &out, 0);
  }
  return out;
}

// ---- the fixture: one seeded database per backend -----------------------------------------

// The servers (one of each kind for the binary) and a fresh database on one:
// store_backends.h, as for the contract suites.
struct Seeded {
  std::unique_ptr<Backend> backend;  // declared first: outlives the database on it
  std::shared_ptr<Database> db;
  std::unique_ptr<TaskStore> store;
  int64_t now_ms = 0;
};

class HistoryTest : public ::testing::TestWithParam<std::string> {
 protected:
  // A migrated database of this backend holding `tasks` seeded tasks.
  std::unique_ptr<Seeded> Open(const testing::HistoryShape& shape) {
    std::string skip;
    auto out = std::make_unique<Seeded>();
    out->backend = std::make_unique<Backend>(GetParam(), /*pool_size=*/4);
    out->db = out->backend->OpenFresh(&skip);
    if (out->db == nullptr) {
      if (testing::RealServersRequired()) ADD_FAILURE() << GetParam() << ": " << skip;
      skip_ = skip.empty() ? "cannot open" : skip;
      return nullptr;
    }
    out->store = NewSqlTaskStore(out->db);
    Status migrated = out->store->Migrate();
    EXPECT_TRUE(migrated.ok()) << migrated.ToString();
    auto now = out->store->DatabaseNowMs();
    EXPECT_TRUE(now.ok());
    out->now_ms = now.ok() ? *now : 0;
    Status seeded = testing::SeedHistory(*out->db, shape, out->now_ms);
    EXPECT_TRUE(seeded.ok()) << seeded.ToString();
    if (!migrated.ok() || !seeded.ok()) return nullptr;
    return out;
  }

  // The big seeded database of this backend, made once for the binary.
  Seeded* Shared() {
    static std::map<std::string, std::unique_ptr<Seeded>> shared;
    auto& slot = shared[GetParam()];
    if (!slot) {
      testing::HistoryShape shape;
      shape.tasks = kSeededTasks;
      shape.tenant_one_users = 20;  // 800 tasks each: a user's list is a real range
      shape.users_per_other_tenant = 10;
      shape.events_per_task = 1;
      slot = Open(shape);
    }
    return slot.get();
  }

  int64_t Count(Database& db, const std::string& sql, const SqlParams& params = {}) {
    auto rows = db.Query(sql, params);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->at(0).Int(0) : -1;
  }

  std::string skip_;
};

#define OPEN_SHARED_OR_SKIP(var)                               \
  Seeded* var = Shared();                                      \
  if (var == nullptr && !skip_.empty()) GTEST_SKIP() << skip_; \
  ASSERT_NE(var, nullptr)

TEST_P(HistoryTest, EveryHistoryStatementIsServedByAnIndexInItsOrder) {
  OPEN_SHARED_OR_SKIP(s);
  sql::PlanSample sample;
  sample.tenant_id = "t1";
  sample.user = "u1";
  sample.export_type = "type1";
  sample.failure_code = testing::kSeedFailureCodes[0];
  sample.now_ms = s->now_ms;
  auto middle = s->db->Query(
      "SELECT requested_at, id FROM export_task WHERE tenant_id = 't1' AND id > ? ORDER BY id"
      " LIMIT 1",
      {kSeededTasks / 2});
  ASSERT_TRUE(middle.ok() && !middle->empty());
  sample.after = {middle->at(0).Int(0), middle->at(0).Int(1)};
  auto downloaded = s->db->Query("SELECT task_id FROM export_download_audit ORDER BY id LIMIT 1");
  ASSERT_TRUE(downloaded.ok() && !downloaded->empty());
  sample.task_id = downloaded->at(0).Int(0);

  const std::vector<sql::PlannedStatement> statements = sql::PlannedStatements(sample);
  ASSERT_GT(statements.size(), 100u);
  int bad = 0;
  for (const sql::PlannedStatement& statement : statements) {
    auto plan = ReadPlan(*s->db, statement);
    ASSERT_TRUE(plan.ok()) << statement.name << ": " << plan.status().ToString();
    // The statement runs, too: the plan read is the plan of a working statement.
    auto ran =
        s->db->Query(s->db->dialect().Expand(statement.statement.sql), statement.statement.params);
    EXPECT_TRUE(ran.ok()) << statement.name << ": " << ran.status().ToString();
    if (!plan->problems.empty() && ScanStopsEarly(*s->db, statement, plan->problems)) {
      continue;
    }
    if (plan->problems.empty()) continue;
    ++bad;
    ADD_FAILURE() << GetParam() << " · " << statement.name << ": " << plan->problems[0] << "\n"
                  << statement.statement.sql << "\n"
                  << plan->text;
  }
  EXPECT_EQ(bad, 0) << "of " << statements.size() << " statements";
}

// The ids of the list `q` as the database orders them, to compare with.
std::vector<int64_t> ExpectedIds(Database& db, const TaskCatalog::ListQuery& q) {
  sql::PageStatements page = sql::TaskListStatements(q);
  std::string where = page.rows.sql.substr(page.rows.sql.find(" WHERE "));
  where = where.substr(0, where.find(" ORDER BY "));
  SqlParams params(page.rows.params.begin(), page.rows.params.end() - 2);
  auto rows = db.Query(
      "SELECT id FROM export_task" + where + " ORDER BY requested_at DESC, id DESC", params);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<int64_t> ids;
  if (rows.ok()) {
    for (const Row& r : *rows) ids.push_back(r.Int(0));
  }
  return ids;
}

TEST_P(HistoryTest, TheCursorPagesThroughAListOnceInOrderTiesIncluded) {
  OPEN_SHARED_OR_SKIP(s);
  // Twelve tasks of u2 requested in one millisecond: the id breaks the tie.
  auto tied = s->db->Exec(
      "UPDATE export_task SET requested_at = 1000 WHERE id IN (SELECT id FROM (SELECT id FROM"
      " export_task WHERE tenant_id = 't1' AND requested_by = 'u2' ORDER BY id LIMIT 12) picked)");
  ASSERT_TRUE(tied.ok()) << tied.status().ToString();
  ASSERT_EQ(*tied, 12);
  for (bool failed_only : {false, true}) {
    TaskCatalog::ListQuery q;
    q.tenant_id = "t1";
    q.requested_by = "u2";
    if (failed_only) q.any_status = {task::TaskState::kFailed, task::TaskState::kCancelled};
    q.size = 7;
    const std::vector<int64_t> expected = ExpectedIds(*s->db, q);
    ASSERT_GT(expected.size(), failed_only ? 10u : 500u);
    std::vector<int64_t> got;
    for (int pages = 0; pages < 1000; ++pages) {
      auto page = s->store->ListTasks(q);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      EXPECT_TRUE(page->total_is_exact);
      EXPECT_EQ(page->total, static_cast<int64_t>(expected.size()));
      for (const auto& t : page->records) got.push_back(t.id);
      if (!page->next) {
        EXPECT_LE(page->records.size(), 7u);
        break;
      }
      ASSERT_EQ(page->records.size(), 7u);
      EXPECT_EQ(page->next->id, page->records.back().id);
      EXPECT_EQ(page->next->at, page->records.back().requested_at);
      q.after = page->next;
      q.page = 99;  // ignored beside a cursor
    }
    EXPECT_EQ(got, expected);
  }
}

TEST_P(HistoryTest, TheOldPageParameterAgreesWithTheCursor) {
  OPEN_SHARED_OR_SKIP(s);
  TaskCatalog::ListQuery q;
  q.tenant_id = "t1";
  q.size = 20;
  auto first = s->store->ListTasks(q);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->next);
  q.page = 2;
  auto by_page = s->store->ListTasks(q);
  q.page = 1;
  q.after = first->next;
  auto by_cursor = s->store->ListTasks(q);
  ASSERT_TRUE(by_page.ok() && by_cursor.ok());
  ASSERT_EQ(by_page->records.size(), 20u);
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(by_page->records[i].id, by_cursor->records[i].id);
}

TEST_P(HistoryTest, TotalsAreExactUpToTheBoundThenSayAtLeast) {
  OPEN_SHARED_OR_SKIP(s);
  const int64_t tenant_rows = Count(*s->db,
                                    "SELECT COUNT(*) FROM export_task WHERE tenant_id = 't1' AND"
                                    " app_code = 'PLATFORM'");
  ASSERT_GT(tenant_rows, kExactTotalBound);
  TaskCatalog::ListQuery tenant;
  tenant.tenant_id = "t1";
  auto whole = s->store->ListTasks(tenant);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->total, kExactTotalBound);
  EXPECT_FALSE(whole->total_is_exact);

  tenant.any_status = {task::TaskState::kFailed};
  auto failed = s->store->ListTasks(tenant);
  ASSERT_TRUE(failed.ok());
  EXPECT_TRUE(failed->total_is_exact);
  EXPECT_EQ(failed->total, Count(*s->db,
                                 "SELECT COUNT(*) FROM export_task WHERE tenant_id = 't1' AND"
                                 " app_code = 'PLATFORM' AND status = 'FAILED'"));

  OperatorFilter all;
  auto search = s->store->SearchTasks(all, 1, 20, std::nullopt);
  ASSERT_TRUE(search.ok());
  EXPECT_EQ(search->total, kExactTotalBound);
  EXPECT_FALSE(search->total_is_exact);
  // The bulk count gates an action: exact, however many.
  auto exact = s->store->CountTasks(all);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(*exact, Count(*s->db, "SELECT COUNT(*) FROM export_task"));
}

TEST_P(HistoryTest, TheConsoleAndTheAuditPageByCursorToo) {
  OPEN_SHARED_OR_SKIP(s);
  OperatorFilter f;
  f.scope.tenant_id = "t3";
  std::set<int64_t> seen;
  std::optional<PageKey> after;
  int64_t last_at = INT64_MAX;
  for (int pages = 0; pages < 1000; ++pages) {
    auto page = s->store->SearchTasks(f, 1, 100, after);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& t : page->records) {
      EXPECT_TRUE(seen.insert(t.id).second) << "task " << t.id << " twice";
      EXPECT_LE(t.requested_at, last_at);
      last_at = t.requested_at;
    }
    if (!page->next) break;
    after = page->next;
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()),
            Count(*s->db, "SELECT COUNT(*) FROM export_task WHERE tenant_id = 't3'"));

  DownloadAuditQuery q;
  q.tenant_id = "t1";
  q.size = 100;
  std::set<int64_t> audited;
  for (int pages = 0; pages < 1000; ++pages) {
    auto page = s->store->ListDownloadAudit(q);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& e : page->records) EXPECT_TRUE(audited.insert(e.id).second);
    if (!page->next) break;
    q.after = page->next;
  }
  EXPECT_EQ(static_cast<int64_t>(audited.size()),
            Count(*s->db, "SELECT COUNT(*) FROM export_download_audit WHERE tenant_id = 't1'"));
}

TEST_P(HistoryTest, RetentionDeletesOldEndedTasksWithTheirTimelineAndAuditOnly) {
  testing::HistoryShape shape;
  shape.tasks = 3000;
  shape.tenant_one_users = 20;
  shape.events_per_task = 3;
  shape.downloads_every = 1;
  std::unique_ptr<Seeded> s = Open(shape);
  if (s == nullptr && !skip_.empty()) GTEST_SKIP() << skip_;
  ASSERT_NE(s, nullptr);
  Database& db = *s->db;
  // A task stuck active for two years, and an old SUCCEEDED one whose file is
  // still there: neither may go.
  ASSERT_TRUE(db.Exec("UPDATE export_task SET status = 'PENDING', updated_at = ? WHERE id = 5",
                      {s->now_ms - 700 * kDayMs})
                  .ok());
  ASSERT_TRUE(db.Exec("UPDATE export_task SET status = 'SUCCEEDED', updated_at = ? WHERE id = 6",
                      {s->now_ms - 700 * kDayMs})
                  .ok());
  const std::string old = "updated_at < " + std::to_string(s->now_ms - 365 * kDayMs);
  const std::string gone =
      old + " AND status IN ('FAILED', 'CANCELLED', 'EXPIRED', 'STALE', 'INCONSISTENT')";
  const int64_t tasks = Count(db, "SELECT COUNT(*) FROM export_task");
  const int64_t to_delete = Count(db, "SELECT COUNT(*) FROM export_task WHERE " + gone);
  const int64_t events = Count(db, "SELECT COUNT(*) FROM export_task_event");
  const int64_t events_to_delete =
      Count(db,
            "SELECT COUNT(*) FROM export_task_event WHERE task_id IN (SELECT id FROM"
            " export_task WHERE " +
                gone + ")");
  const int64_t audits = Count(db, "SELECT COUNT(*) FROM export_download_audit");
  const int64_t audits_to_delete =
      Count(db,
            "SELECT COUNT(*) FROM export_download_audit WHERE task_id IN (SELECT id FROM"
            " export_task WHERE " +
                gone + ")");
  ASSERT_GT(to_delete, 1000);
  ASSERT_GT(audits_to_delete, 100);
  ASSERT_LT(to_delete, tasks - 500);

  int64_t deleted = 0;
  int rounds = 0;
  for (;; ++rounds) {
    auto n = s->store->DeleteOldHistory(365, 100);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_LE(*n, 100);  // small batches
    deleted += *n;
    if (*n == 0) break;
  }
  EXPECT_EQ(deleted, to_delete);
  EXPECT_GE(rounds, static_cast<int>(to_delete / 100));
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM export_task WHERE " + gone), 0);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM export_task"), tasks - to_delete);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM export_task_event"), events - events_to_delete);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM export_download_audit"), audits - audits_to_delete);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM export_task WHERE id IN (5, 6)"), 2);
  // Nothing is left without its task, nor any young or active task touched.
  EXPECT_EQ(Count(db,
                  "SELECT COUNT(*) FROM export_task_event e WHERE NOT EXISTS"
                  " (SELECT 1 FROM export_task t WHERE t.id = e.task_id)"),
            0);
  auto again = s->store->DeleteOldHistory(365, 100);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
}

EC_INSTANTIATE_ON_EVERY_BACKEND(HistoryTest);

}  // namespace
}  // namespace export_center::store
