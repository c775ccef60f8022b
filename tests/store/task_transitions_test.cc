// The one transition function (store/sql/task_transitions.h) and its table
// (task::kTransitions), both ways, on SQLite: every edge of the table is
// taken by a production method of the store, each writing its timeline event,
// its command row (PENDING) and its notification rows (end states); every
// pair outside the table is refused before any SQL; no other statement of
// src/ changes export_task.status; one file writes export_notification. The contract suites run the
// same methods on PostgreSQL and MariaDB.

#include "store/sql/task_transitions.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "store/migrations.h"
#include "store/notification_outbox.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"

namespace export_center::store {
namespace {

using task::Task;
using task::TaskState;
using Edge = std::pair<TaskState, TaskState>;

constexpr TaskState kAll[] = {TaskState::kPending, TaskState::kRunning,     TaskState::kSucceeded,
                              TaskState::kFailed,  TaskState::kCancelled,   TaskState::kExpired,
                              TaskState::kStale,   TaskState::kInconsistent};

std::set<Edge> TableEdges() {
  std::set<Edge> out;
  for (const task::Transition& t : task::kTransitions) out.insert({t.from, t.to});
  return out;
}

std::string Name(const Edge& e) {
  return std::string(task::ToString(e.first)) + " -> " + std::string(task::ToString(e.second));
}

class TaskTransitionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-transitions-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = OpenSqliteDatabase(dir_ + "/store.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::shared_ptr<Database>(std::move(db).value());
    store_ = NewSqlTaskStore(db_);
    ASSERT_TRUE(store_->Migrate().ok());
    // One receiver of every end state, so each end writes exactly one row.
    store_->SetNotificationRoutes({NotificationRoute{"all", {}, {}, {}, {}}});
  }
  void TearDown() override {
    store_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  Task Create() {
    NewTask t;
    t.tenant_id = "t1";
    t.requested_by = "alice";
    t.export_type = "orders";
    t.task_name = "orders";
    t.parameters_json = "{\"n\":" + std::to_string(++created_) + "}";
    t.params_hash = "hash:" + t.parameters_json;
    auto r = store_->CreateTask(t, CreateLimits{60, 1000, 1000});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->task : Task{};
  }

  Task Get(int64_t id) {
    auto t = store_->GetTask(id);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : Task{};
  }

  int64_t Count(const std::string& sql, const SqlParams& params) {
    auto rows = db_->Query(sql, params);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->at(0).Int(0) : -1;
  }

  int64_t Events(int64_t task_id, int32_t version, const std::string& kind) {
    return Count(
        "SELECT COUNT(*) FROM export_task_event WHERE task_id = ? AND dispatch_version = ?"
        " AND kind = ?",
        {task_id, version, kind});
  }

  // Runs `op` on task `id` through the store, expects it to move the task to
  // `to`, and checks what the arrival must have written with it.
  void Step(int64_t id, TaskState to, const char* event, const std::function<void()>& op) {
    const Task before = Get(id);
    const int64_t finished = Events(id, before.dispatch_version, "FINISHED");
    op();
    const Task after = Get(id);
    ASSERT_EQ(after.status, to) << "task " << id << " from " << task::ToString(before.status);
    const Edge edge{before.status, to};
    taken_.insert(edge);
    const sql::Arrival& arrival = sql::ArrivalOf(to);
    const int32_t left = before.dispatch_version;
    EXPECT_EQ(after.dispatch_version, arrival.new_attempt ? left + 1 : left) << Name(edge);
    if (event != nullptr) {
      const int32_t at = std::string(event) == "MANUAL_RETRY" ? after.dispatch_version : left;
      EXPECT_EQ(Events(id, at, event), 1) << Name(edge) << " records " << event;
    }
    EXPECT_EQ(Events(id, left, "FINISHED"), finished + (arrival.finished_event ? 1 : 0))
        << Name(edge);
    EXPECT_EQ(Count("SELECT COUNT(*) FROM export_notification WHERE task_id = ?"
                    " AND task_status = ?",
                    {id, std::string(task::ToString(to))}),
              arrival.notify ? 1 : 0)
        << Name(edge);
    if (arrival.new_attempt) {
      EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox WHERE task_id = ?"
                      " AND dispatch_version = ? AND status = 'PENDING'",
                      {id, after.dispatch_version}),
                1)
          << Name(edge) << " writes the command of the new version";
    }
  }

  Task Claimed() {
    Task t = Create();
    Step(t.id, TaskState::kRunning, "CLAIMED", [&] {
      ClaimRequest r;
      r.task_id = t.id;
      r.dispatch_version = t.dispatch_version;
      r.instance = "w1";
      auto claimed = store_->ClaimTask(r);
      ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
      EXPECT_TRUE(claimed->claimed);
    });
    return Get(t.id);
  }

  void Finish(const Task& t, TaskState to, const char* code) {
    Step(t.id, to, nullptr, [&] {
      auto r = store_->FinishAttempt({t.id, t.dispatch_version, "w1"}, to, code,
                                     FailureText("ended " + std::string(code)));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(*r, FinishOutcome::kFinished);
    });
  }

  void ManualRetry(const Task& t) {
    Step(t.id, TaskState::kPending, "MANUAL_RETRY", [&] {
      auto r = store_->ManualRetry(t.id, "trace");
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    });
  }

  std::string dir_;
  std::shared_ptr<Database> db_;
  std::unique_ptr<TaskStore> store_;
  int created_ = 0;
  std::set<Edge> taken_;
};

TEST_F(TaskTransitionsTest, EveryEdgeOfTheTableIsTakenByTheStoreWithItsEffects) {
  // Claim, commit, expiry.
  Task a = Claimed();
  Step(a.id, TaskState::kSucceeded, nullptr, [&] {
    FileResult f{"a.csv", "exports/a.csv", "text/csv", 10, 2, std::string(64, 'a'), {2}};
    auto r = store_->CommitSuccess({a.id, a.dispatch_version, "w1"}, f, 7);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, CommitOutcome::kCommitted);
  });
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET expires_at = expires_at - ? WHERE id = ?",
                        {int64_t{8} * 86'400'000, a.id})
                  .ok());
  Step(a.id, TaskState::kExpired, "EXPIRED", [&] {
    auto r = store_->MarkExpired(a.id);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, ExpireOutcome::kExpired);
  });

  // Cancel before a claim, then a manual retry from CANCELLED.
  Task b = Create();
  Step(b.id, TaskState::kCancelled, "CANCEL_REQUESTED", [&] {
    auto r = store_->RequestCancel(b.id);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  });
  ManualRetry(b);

  // Quarantine of a PENDING command, then a manual retry from FAILED.
  Task c = Create();
  Step(c.id, TaskState::kFailed, "QUARANTINED", [&] {
    auto outbox = store_->ListOutboxForTask(c.id);
    ASSERT_TRUE(outbox.ok() && !outbox->empty());
    ASSERT_TRUE(
        store_->QuarantineCommand(c.id, c.dispatch_version, outbox->front().event_id, "undecodable")
            .ok());
  });
  ManualRetry(c);

  // An automatic retry, and a lease recovery that requeues.
  Task d = Claimed();
  Step(d.id, TaskState::kPending, "RETRY_SCHEDULED", [&] {
    auto r = store_->ScheduleRetry({d.id, d.dispatch_version, "w1"}, FailureText("boom"), 0);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, RetryOutcome::kRescheduled);
  });
  Task e = Claimed();
  ASSERT_TRUE(
      db_->Exec("UPDATE export_task SET lease_until = lease_until - 301000 WHERE id = ?", {e.id})
          .ok());
  Step(e.id, TaskState::kPending, "LEASE_RECOVERED", [&] {
    auto r = store_->RecoverExpiredLeases(10);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->size(), 1u);
  });

  // The attempt's own ends; INCONSISTENT is retried by hand.
  Finish(Claimed(), TaskState::kFailed, "SOURCE_ERROR");
  Finish(Claimed(), TaskState::kCancelled, "CANCELLED");
  Finish(Claimed(), TaskState::kStale, "CONTRACT_CHANGED");
  Task i = Claimed();
  Finish(i, TaskState::kInconsistent, "ROW_COUNT_MISMATCH");
  ManualRetry(i);

  for (const Edge& edge : TableEdges()) {
    EXPECT_EQ(taken_.count(edge), 1u) << Name(edge) << " is in the table but never taken";
  }
  for (const Edge& edge : taken_) {
    EXPECT_TRUE(task::IsAllowedTransition(edge.first, edge.second)) << Name(edge);
  }
}

// Records what Apply asks of the core.
class RecordingEffects : public sql::TaskTransitions::Effects {
 public:
  Status RecordEvent(Connection&, int64_t, int32_t, TaskEventKind kind,
                     const nlohmann::json&) override {
    calls.push_back(std::string("event:") + std::string(ToString(kind)));
    return Status::Ok();
  }
  Status InsertCommandOrFail(Connection&, const Task&, const std::string&) override {
    calls.emplace_back("command");
    return Status::Ok();
  }
  Status NotifyEnded(Connection&, int64_t) override {
    calls.emplace_back("notify");
    return Status::Ok();
  }
  std::vector<std::string> calls;
};

TEST_F(TaskTransitionsTest, EveryPairOutsideTheTableIsRefusedBeforeAnySql) {
  const std::set<Edge> table = TableEdges();
  RecordingEffects effects;
  sql::TaskTransitions transitions(db_->dialect(), effects);
  const Task t = Create();
  int refused = 0;
  for (TaskState from : kAll) {
    for (TaskState to : kAll) {
      if (table.count({from, to}) == 1) continue;
      ASSERT_TRUE(db_->Exec("UPDATE export_task SET status = ? WHERE id = ?",
                            {std::string(task::ToString(from)), t.id})
                      .ok());
      sql::TransitionChange change;
      change.task_id = t.id;
      change.from = {from};
      change.to = to;
      change.event = TaskEventKind::kFinished;
      Status status = db_->WithTransaction(
          TxMode::kWrite, [&](Connection& c) { return transitions.Apply(c, change).status(); });
      EXPECT_EQ(status.code(), StatusCode::kInternal) << Name({from, to});
      EXPECT_NE(status.message().find("not in the transition table"), std::string::npos)
          << status.ToString();
      EXPECT_EQ(Get(t.id).status, from) << Name({from, to}) << " changed the row";
      ++refused;
    }
  }
  EXPECT_EQ(refused, 8 * 8 - static_cast<int>(table.size()));
  EXPECT_TRUE(effects.calls.empty());
}

TEST_F(TaskTransitionsTest, AnAllowedEdgeWritesItsArrivalInOrderAndAMissWritesNothing) {
  RecordingEffects effects;
  sql::TaskTransitions transitions(db_->dialect(), effects);
  const Task t = Create();
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET status = 'RUNNING' WHERE id = ?", {t.id}).ok());

  sql::TransitionChange change;
  change.task_id = t.id;
  change.from = {TaskState::kRunning};
  change.to = TaskState::kCancelled;
  change.version = t.dispatch_version + 5;  // a condition that does not hold
  change.event = TaskEventKind::kLeaseRecovered;
  auto miss = db_->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
    auto r = transitions.Apply(c, change);
    if (!r.ok()) return r.status();
    EXPECT_FALSE(r->has_value());
    return Status::Ok();
  });
  ASSERT_TRUE(miss.ok()) << miss.ToString();
  EXPECT_TRUE(effects.calls.empty());
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);

  change.version = t.dispatch_version;
  auto hit = db_->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
    auto r = transitions.Apply(c, change);
    if (!r.ok()) return r.status();
    EXPECT_TRUE(r->has_value());
    return Status::Ok();
  });
  ASSERT_TRUE(hit.ok()) << hit.ToString();
  EXPECT_EQ(effects.calls,
            (std::vector<std::string>{"event:LEASE_RECOVERED", "event:FINISHED", "notify"}));
  EXPECT_EQ(Get(t.id).status, TaskState::kCancelled);
}

TEST(TaskArrivals, EveryStateHasItsRowAndEndStatesAreTheNotifiedOnes) {
  for (TaskState s : kAll) {
    const sql::Arrival& a = sql::ArrivalOf(s);
    EXPECT_EQ(a.state, s) << task::ToString(s) << " has no arrival row";
    EXPECT_EQ(a.notify, IsNotifiedEnd(s)) << task::ToString(s);
    EXPECT_EQ(a.new_attempt, s == TaskState::kPending) << task::ToString(s);
  }
}

// No statement of src/ but TaskTransitions::Apply changes a task's state.
TEST(TaskTransitionsSource, NoOtherStatementUpdatesTheTaskStatus) {
  const std::regex update(R"(export_task\s+SET\s+status)", std::regex::icase);
  const std::filesystem::path src = std::filesystem::path(EC_SOURCE_DIR) / "src";
  int writers = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (!std::regex_search(text.str(), update)) continue;
    EXPECT_EQ(entry.path().filename().string(), "task_transitions.cc")
        << entry.path() << " changes export_task.status outside TaskTransitions";
    ++writers;
  }
  EXPECT_EQ(writers, 1);
}

// export_notification has one writer: sql_notification_outbox.cc (its queue,
// the rows of a task's end, the operators' re-delivery).
TEST(TaskTransitionsSource, OneFileWritesExportNotification) {
  const std::regex write(
      R"((INSERT_IGNORE\}|INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+export_notification\b)",
      std::regex::icase);
  const std::filesystem::path src = std::filesystem::path(EC_SOURCE_DIR) / "src";
  std::set<std::string> writers;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (std::regex_search(text.str(), write)) writers.insert(entry.path().filename().string());
  }
  EXPECT_EQ(writers, (std::set<std::string>{"sql_notification_outbox.cc"}));
}

}  // namespace
}  // namespace export_center::store
