// LeasedQueue and RunClaimRound (store/leased_queue.h) on a table of their own:
// the claim/mark SQL is parameterised by the table, so it works on any table
// with the leased columns, not only export_outbox and export_notification
// (whose behaviour the task store contract suite checks on every database).

#include "store/leased_queue.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_database.h"

namespace export_center::store {
namespace {

constexpr char kColumns[] = "id, status, attempt_count, lease_owner";

class LeasedQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-leased-queue-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = OpenSqliteDatabase(dir_ + "/queue.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::shared_ptr<Database>(std::move(db).value());
    ASSERT_TRUE(db_->Exec("CREATE TABLE job (id INTEGER PRIMARY KEY, status TEXT NOT NULL,"
                          " attempt_count INTEGER NOT NULL, next_retry_at INTEGER NOT NULL,"
                          " lease_owner TEXT, lease_until INTEGER, note TEXT,"
                          " updated_at INTEGER NOT NULL)")
                    .ok());
    queue_ = std::make_unique<LeasedQueue>(
        db_,
        LeasedQueueTable{"job", kColumns, "status = 'PENDING' AND next_retry_at <= {NOW}", ""});
  }
  void TearDown() override {
    queue_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A PENDING row due `due_in_ms` from now (negative: already due).
  void Add(int64_t id, int64_t due_in_ms) {
    ASSERT_TRUE(db_->Exec(db_->dialect().Expand("INSERT INTO job (id, status, attempt_count,"
                                                " next_retry_at, updated_at)"
                                                " VALUES (?, 'PENDING', 0, {NOW} + ?, {NOW})"),
                          {id, due_in_ms})
                    .ok());
  }
  std::string StatusOf(int64_t id) {
    auto rows = db_->Query("SELECT status FROM job WHERE id = ?", {id});
    EXPECT_TRUE(rows.ok());
    return rows.ok() && !rows->empty() ? rows->at(0).Text(0) : "";
  }

  std::string dir_;
  std::shared_ptr<Database> db_;
  std::unique_ptr<LeasedQueue> queue_;
};

TEST_F(LeasedQueueTest, SelectsOnlyDueRowsOldestFirst) {
  Add(1, -1000);
  Add(2, -5000);
  Add(3, 60000);  // in its back-off
  auto due = queue_->SelectDue(10);
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  EXPECT_EQ(*due, (std::vector<int64_t>{2, 1}));
  auto one = queue_->SelectDue(1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, (std::vector<int64_t>{2}));
}

TEST_F(LeasedQueueTest, OneClaimWinsAndReadsTheRowBack) {
  Add(1, -1000);
  auto first = queue_->Claim(1, "a", 60);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->Int(0), 1);
  EXPECT_EQ((*first)->Text(1), "CLAIMED");
  EXPECT_EQ((*first)->Int(2), 1);  // attempt_count + 1
  EXPECT_EQ((*first)->Text(3), "a");
  auto second = queue_->Claim(1, "b", 60);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->has_value()) << "a claimed row is not claimable";
  auto not_due = queue_->Claim(99, "b", 60);
  ASSERT_TRUE(not_due.ok());
  EXPECT_FALSE(not_due->has_value());
}

TEST_F(LeasedQueueTest, OnlyTheClaimingInstanceMarksAndAMarkClearsTheLease) {
  Add(1, -1000);
  ASSERT_TRUE(queue_->Claim(1, "a", 60).ok());
  auto foreign = queue_->Mark(1, "b", "status = 'DONE'", {});
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(*foreign, MarkOutcome::kClaimLost);
  EXPECT_EQ(StatusOf(1), "CLAIMED");
  auto mine = queue_->Mark(1, "a", "status = 'DONE', note = ?", {std::string("ok")});
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  EXPECT_EQ(*mine, MarkOutcome::kMarked);
  auto rows = db_->Query("SELECT status, note, lease_owner, lease_until FROM job WHERE id = 1");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->at(0).Text(0), "DONE");
  EXPECT_EQ(rows->at(0).Text(1), "ok");
  EXPECT_FALSE(rows->at(0).OptText(2).has_value());
  EXPECT_FALSE(rows->at(0).OptInt(3).has_value());
  auto again = queue_->Mark(1, "a", "status = 'DONE'", {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, MarkOutcome::kClaimLost) << "a repeat finds the row no longer CLAIMED";
}

TEST_F(LeasedQueueTest, ListReadsTheColumnsInOrder) {
  Add(2, -1000);
  Add(1, -1000);
  auto rows = queue_->List("status = ?", "id", {std::string("PENDING")});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(rows->at(0).Int(0), 1);
  EXPECT_EQ(rows->at(1).Int(0), 2);
}

// ---- RunClaimRound ------------------------------------------------------------

struct FakeQueue {
  std::vector<int64_t> due;
  std::vector<int64_t> lost;    // claims another instance wins
  std::vector<int64_t> broken;  // claims that fail
  std::vector<int64_t> handled;
  std::vector<int64_t> claim_errors;

  ClaimRound<int64_t> Round(int batch, std::function<bool(int64_t)> ok) {
    ClaimRound<int64_t> r;
    r.batch_size = batch;
    r.select_due = [this](int limit) -> StatusOr<std::vector<int64_t>> {
      std::vector<int64_t> out(due.begin(), due.begin() + std::min<size_t>(limit, due.size()));
      return out;
    };
    r.claim = [this](int64_t id) -> StatusOr<std::optional<int64_t>> {
      if (std::find(broken.begin(), broken.end(), id) != broken.end()) {
        return Unavailable("database restarting");
      }
      if (std::find(lost.begin(), lost.end(), id) != lost.end()) return std::optional<int64_t>();
      return std::optional<int64_t>(id);
    };
    r.handle = [this, ok](const int64_t& id) {
      handled.push_back(id);
      return ok(id);
    };
    r.on_claim_error = [this](int64_t id, const Status&) { claim_errors.push_back(id); };
    return r;
  }
};

TEST(ClaimRoundTest, HandsEveryClaimedEntryOverAndCountsOnlyTheClaimed) {
  FakeQueue q{{1, 2, 3, 4}, {2}, {3}, {}, {}};
  auto done = RunClaimRound(q.Round(10, [](int64_t) { return true; }));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->claimed, 2);
  EXPECT_EQ(q.handled, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(q.claim_errors, (std::vector<int64_t>{3}));
  EXPECT_FALSE(done->gave_up_after.has_value());
}

TEST(ClaimRoundTest, SelectsAtMostABatch) {
  FakeQueue q{{1, 2, 3, 4}, {}, {}, {}, {}};
  auto done = RunClaimRound(q.Round(3, [](int64_t) { return true; }));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->claimed, 3);
}

TEST(ClaimRoundTest, FailuresInARowEndTheRoundAndLeaveTheRestUntried) {
  FakeQueue q{{1, 2, 3, 4, 5, 6}, {}, {}, {}, {}};
  ClaimRound<int64_t> round = q.Round(10, [](int64_t id) { return id == 1; });
  round.failures_that_end_a_round = 3;
  auto done = RunClaimRound(round);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(q.handled, (std::vector<int64_t>{1, 2, 3, 4}));
  ASSERT_TRUE(done->gave_up_after.has_value());
  EXPECT_EQ(*done->gave_up_after, 3);
  EXPECT_EQ(done->left_untried, 2u);
}

// The rows left are those not tried: a claim another instance won was tried.
TEST(ClaimRoundTest, GivingUpCountsAsUntriedOnlyTheIdsNotReached) {
  FakeQueue q{{1, 2, 3, 4, 5, 6}, {1}, {}, {}, {}};
  ClaimRound<int64_t> round = q.Round(10, [](int64_t) { return false; });
  round.failures_that_end_a_round = 3;
  auto done = RunClaimRound(round);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(q.handled, (std::vector<int64_t>{2, 3, 4}));
  ASSERT_TRUE(done->gave_up_after.has_value());
  EXPECT_EQ(done->left_untried, 2u);
}

TEST(ClaimRoundTest, ASuccessResetsTheFailureCountAndZeroNeverGivesUp) {
  FakeQueue q{{1, 2, 3, 4, 5}, {}, {}, {}, {}};
  ClaimRound<int64_t> flapping = q.Round(10, [](int64_t id) { return id % 2 == 1; });
  flapping.failures_that_end_a_round = 2;
  ASSERT_EQ(RunClaimRound(flapping)->claimed, 5);
  FakeQueue never{{1, 2, 3, 4, 5}, {}, {}, {}, {}};
  ASSERT_EQ(RunClaimRound(never.Round(10, [](int64_t) { return false; }))->claimed, 5);
}

TEST(ClaimRoundTest, StoppingEndsTheRoundBeforeTheNextClaim) {
  FakeQueue q{{1, 2, 3}, {}, {}, {}, {}};
  ClaimRound<int64_t> round = q.Round(10, [](int64_t) { return true; });
  round.stopping = [&q] { return q.handled.size() == 1; };
  auto done = RunClaimRound(round);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->claimed, 1);
}

TEST(ClaimRoundTest, ASelectErrorIsTheRoundsError) {
  ClaimRound<int64_t> round;
  round.select_due = [](int) -> StatusOr<std::vector<int64_t>> { return Unavailable("down"); };
  auto done = RunClaimRound(round);
  EXPECT_EQ(done.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace export_center::store
