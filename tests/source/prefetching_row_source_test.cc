// PrefetchingRowSource: the next page is fetched while the caller holds the
// current one, never more than one page ahead, and errors, the last page and
// the inner source's verdicts pass through unchanged.

#include "source/prefetching_row_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "source/column_policy_source.h"

namespace export_center::source {
namespace {

using namespace std::chrono_literals;

// Pages 0..pages-1 of one row each; `fail_at` fails instead. Each call is
// counted and announced; a call may be held until released.
class CountingSource : public RowSource {
 public:
  explicit CountingSource(int pages, int fail_at = -1) : pages_(pages), fail_at_(fail_at) {}
  const std::vector<task::Column>& columns() const override { return columns_; }
  // Advice on the page statement after the first page, one more per
  // enrich group on each later page; a failure's facts after a failure.
  SourceFacts facts() const override {
    SourceFacts facts{template_, advice_};
    if (failed_) {
      facts.terminal_state = task::TaskState::kInconsistent;
      facts.failure_code = "SOME_CODE";
    }
    return facts;
  }

  StatusOr<Page> NextPage() override {
    std::unique_lock lock(mu_);
    const int i = calls_++;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !held_; });
    if (i == 0) {
      columns_ = {{"id", "ID", task::ColumnType::kInteger, 0, 0, ""}};
      template_ = std::make_shared<const std::string>("xlsx bytes");
    }
    task::PlanAdvice advice;
    advice.statement = i == 0 ? "page" : "enrich group " + std::to_string(i);
    advice.table = "orders";
    advice_.push_back(advice);
    if (i == fail_at_) {
      failed_ = true;
      return Unavailable("page " + std::to_string(i) + " failed");
    }
    Page page;
    page.rows.push_back({int64_t{i}});
    page.has_more = i + 1 < pages_;
    if (i == 0) page.facts = facts();
    return page;
  }

  // Waits until NextPage has been entered `n` times; false after 10 s.
  bool WaitForCalls(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return calls_ >= n; });
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void Hold(bool held) {
    std::lock_guard lock(mu_);
    held_ = held;
    cv_.notify_all();
  }

 private:
  const int pages_;
  const int fail_at_;
  std::mutex mu_;
  std::condition_variable cv_;
  int calls_ = 0;
  bool held_ = false;
  bool failed_ = false;
  std::vector<task::Column> columns_;
  std::shared_ptr<const std::string> template_;
  std::vector<task::PlanAdvice> advice_;
};

TEST(PrefetchingRowSourceTest, FetchesTheNextPageWhileTheCallerHoldsThisOneButNoFurther) {
  auto inner = std::make_unique<CountingSource>(5);
  CountingSource* counting = inner.get();
  PrefetchingRowSource source(std::move(inner));
  for (int i = 0; i < 5; ++i) {
    auto page = source.NextPage();
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_EQ(std::get<int64_t>(page->rows[0][0]), i);
    EXPECT_EQ(page->has_more, i < 4);
    // The facts come with the first page, and only with it.
    EXPECT_EQ(page->facts.has_value(), i == 0);
    if (i == 0) {
      ASSERT_NE(page->facts->excel_template, nullptr);
      EXPECT_EQ(*page->facts->excel_template, "xlsx bytes");
    }
    if (i < 4) {
      // While the caller "writes" page i, page i+1 is being fetched ...
      EXPECT_TRUE(counting->WaitForCalls(i + 2)) << "no prefetch after page " << i;
      // ... and nothing beyond it.
      std::this_thread::sleep_for(20ms);
      EXPECT_EQ(counting->calls(), i + 2);
    }
  }
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(counting->calls(), 5) << "no fetch after the last page";
  EXPECT_EQ(source.columns().size(), 1u);
  ASSERT_NE(source.facts().excel_template, nullptr);
  EXPECT_EQ(*source.facts().excel_template, "xlsx bytes");
  EXPECT_EQ(source.NextPage().status().code(), StatusCode::kInternal);
}

// The prefetcher used to drop plan_advice() (RowSource's default, none): the
// advice travels on the first page now, and facts() is forwarded as a whole
// through RowSourceWrapper.
TEST(PrefetchingRowSourceTest, PlanAdviceIsNotDropped) {
  PrefetchingRowSource source(std::make_unique<CountingSource>(3));
  auto first = source.NextPage();
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->facts.has_value());
  ASSERT_EQ(first->facts->plan_advice.size(), 1u);
  EXPECT_EQ(first->facts->plan_advice[0].statement, "page");
  // While page 1 may be in flight: the advice that came with the first page.
  auto advice = source.facts().plan_advice;
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].statement, "page");
  EXPECT_EQ(advice[0].table, "orders");
  ASSERT_TRUE(source.NextPage().ok());
  ASSERT_TRUE(source.NextPage().ok());
  // The pages are over: the inner source's, with what later pages found.
  advice = source.facts().plan_advice;
  ASSERT_EQ(advice.size(), 3u);
  EXPECT_EQ(advice[2].statement, "enrich group 2");
}

// The stack an attempt builds (the policy over the prefetcher over a route):
// every fact reaches the top.
TEST(PrefetchingRowSourceTest, FactsPassEveryDecorator) {
  task::ColumnDecision masked{"id", task::ColumnAction::kMask, 0, 0, 64};
  auto source = WithColumnPolicy(WithPrefetch(std::make_unique<CountingSource>(1)),
                                 task::ColumnPolicy{{masked}});
  auto page = source->NextPage();
  ASSERT_TRUE(page.ok());
  ASSERT_TRUE(page->facts.has_value());
  EXPECT_EQ(page->facts->plan_advice.size(), 1u);
  ASSERT_NE(page->facts->excel_template, nullptr);
  EXPECT_EQ(*page->facts->excel_template, "xlsx bytes");
  EXPECT_EQ(source->facts().plan_advice.size(), 1u);
  ASSERT_NE(source->facts().excel_template, nullptr);
  EXPECT_EQ(*source->facts().excel_template, "xlsx bytes");
}

// A failure of the caller's (the writer, the size cap) while the next page
// is being fetched is not the source's: no verdict, and the inner source is
// not read while the worker runs it.
TEST(PrefetchingRowSourceTest, NoVerdictWhileThePagesGoOn) {
  auto inner = std::make_unique<CountingSource>(10, /*fail_at=*/1);
  CountingSource* counting = inner.get();
  PrefetchingRowSource source(std::move(inner));
  ASSERT_TRUE(source.NextPage().ok());
  ASSERT_TRUE(counting->WaitForCalls(2));
  EXPECT_EQ(source.facts().terminal_state, std::nullopt);
  EXPECT_EQ(source.facts().failure_code, std::nullopt);
  EXPECT_FALSE(source.NextPage().ok());
  EXPECT_EQ(source.facts().terminal_state, task::TaskState::kInconsistent);
  EXPECT_EQ(source.facts().failure_code, "SOME_CODE");
}

TEST(PrefetchingRowSourceTest, AOnePageExportHasItsColumns) {
  PrefetchingRowSource source(std::make_unique<CountingSource>(1));
  auto page = source.NextPage();
  ASSERT_TRUE(page.ok());
  EXPECT_FALSE(page->has_more);
  EXPECT_EQ(source.columns().size(), 1u);
}

TEST(PrefetchingRowSourceTest, AnErrorArrivesInItsTurnWithTheSourcesVerdict) {
  auto inner = std::make_unique<CountingSource>(10, /*fail_at=*/2);
  CountingSource* counting = inner.get();
  PrefetchingRowSource source(std::move(inner));
  EXPECT_TRUE(source.NextPage().ok());
  EXPECT_TRUE(source.NextPage().ok());
  auto failed = source.NextPage();
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(source.facts().terminal_state, task::TaskState::kInconsistent);
  EXPECT_EQ(source.facts().failure_code, "SOME_CODE");
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(counting->calls(), 3) << "no fetch after an error";
}

// The caller stops (cancel, lost lease, size cap) while a page is being
// fetched: the source goes away once that fetch is over, and the page is
// dropped.
TEST(PrefetchingRowSourceTest, DestroyingWaitsForTheFetchInFlight) {
  auto inner = std::make_unique<CountingSource>(10);
  CountingSource* counting = inner.get();
  std::atomic<bool> destroyed{false};
  std::thread releaser;
  {
    PrefetchingRowSource source(std::move(inner));
    ASSERT_TRUE(source.NextPage().ok());
    ASSERT_TRUE(counting->WaitForCalls(2));  // page 1 is past the hold
    counting->Hold(true);
    ASSERT_TRUE(source.NextPage().ok());     // page 1 was fetched already
    ASSERT_TRUE(counting->WaitForCalls(3));  // page 2 is held inside the inner source
    releaser = std::thread([&] {
      std::this_thread::sleep_for(50ms);
      EXPECT_FALSE(destroyed.load()) << "the destructor returned while a fetch ran";
      counting->Hold(false);
    });
  }
  destroyed = true;
  releaser.join();
}

}  // namespace
}  // namespace export_center::source
