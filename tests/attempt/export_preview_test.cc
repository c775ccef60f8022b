// ExportPreviewer past its time limit (docs/http-api.md#post-export-previews--preview,
// docs/sql-template-route.md#deadlines): the preview whose replica statement
// hangs answers at its limit and frees its slot at once, other previews keep
// answering meanwhile, and the hanging statement (on a real SQLite
// datasource, statement_source.h) is cancelled right after the answer, not
// at its own timeout.

#include "attempt/export_preview.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "attempt/failure_message.h"
#include "statement_source.h"  // beside this test

namespace export_center::attempt {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ExportPreviewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("ec-preview-" + std::to_string(::getpid()) + ".db"))
                .string();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_close(db);
    registry::ExportDefinition def;
    def.name = "TEST_LIST";
    def.max_rows = 1000;
    snapshot_ = std::make_shared<registry::RegistrySnapshot>();
    snapshot_->definitions[def.name] = def;
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // "slow" previews run the endless statement (a minute's timeout), any
  // other user a quick one.
  RowSourceFactory Factory() {
    return
        [this](const task::Task& task, const registry::ExportDefinition&,
               const registry::RegistrySnapshot&) -> StatusOr<std::unique_ptr<source::RowSource>> {
          source::DatasourceTimeouts timeouts;
          timeouts.statement_timeout_ms = 60000;
          const bool slow = task.requested_by == "slow";
          return std::unique_ptr<source::RowSource>(
              new StatementSource(source::NewSqliteDatasource(path_, timeouts),
                                  slow ? kEndlessSql : "SELECT 'ok'", slow ? &slow_ : &quick_));
        };
  }

  task::Task TaskOf(const std::string& user) {
    task::Task t;
    t.id = ++next_id_;
    t.tenant_id = "1";
    t.requested_by = user;
    t.export_type = "TEST_LIST";
    t.format = task::FileFormat::kCsv;
    t.parameters_json = "{}";
    return t;
  }

  std::string path_;
  std::shared_ptr<registry::RegistrySnapshot> snapshot_;
  StatementProbe slow_;
  StatementProbe quick_;
  int64_t next_id_ = 0;
};

TEST_F(ExportPreviewTest, APreviewAtItsLimitFreesItsSlotAndCancelsItsStatement) {
  task::PreviewOptions options;
  options.timeout_seconds = 1;
  options.max_running = 1;  // one slot: the next preview needs the slow one's
  ExportPreviewer previewer(Factory(), options);

  const auto start = Clock::now();
  auto late = previewer.Preview(TaskOf("slow"), snapshot_);
  const auto answered = Clock::now();
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(late.status().message().find("did not finish within 1 s"), std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(answered - start).count(), 1.5);

  // The slot is free at once: the next preview answers from the same one.
  auto next = previewer.Preview(TaskOf("quick"), snapshot_);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_EQ(next->rows.size(), 1u);
  EXPECT_EQ(next->rows[0][0], "ok");

  // The slow statement was cancelled when the preview answered, with its reason.
  while (!slow_.ended && Clock::now() - answered < 5s) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(slow_.ended) << "the statement was not cancelled";
  EXPECT_LT(std::chrono::duration<double>(slow_.EndedAt() - answered).count(), 0.5);
  EXPECT_EQ(slow_.Outcome().code(), StatusCode::kDeadlineExceeded);
}

// docs/sql-template-route.md#plan-advice: the advice the source found while
// reading the first page is the preview's, before anything is queued.
class AdvisedSource : public StatementSource {
 public:
  using StatementSource::StatementSource;
  source::SourceFacts facts() const override {
    task::PlanAdvice advice;
    advice.statement = "page";
    advice.table = "orders";
    advice.suggested_index = "CREATE INDEX orders_tenant_id ON orders (tenant_id)";
    return {nullptr, {advice}};
  }
};

TEST_F(ExportPreviewTest, ThePreviewCarriesThePlanAdviceOfTheFirstPage) {
  RowSourceFactory factory =
      [this](const task::Task&, const registry::ExportDefinition&,
             const registry::RegistrySnapshot&) -> StatusOr<std::unique_ptr<source::RowSource>> {
    return std::unique_ptr<source::RowSource>(
        new AdvisedSource(source::NewSqliteDatasource(path_), "SELECT 'ok'", &quick_));
  };
  auto table = ReadPreview(factory, TaskOf("u1"), *snapshot_, 5);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->plan_advice.size(), 1u);
  EXPECT_EQ(table->plan_advice[0].table, "orders");
  EXPECT_EQ(table->plan_advice[0].suggested_index,
            "CREATE INDEX orders_tenant_id ON orders (tenant_id)");
  // A source without advice previews none.
  auto plain = ReadPreview(Factory(), TaskOf("u1"), *snapshot_, 5);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->plan_advice.empty());
}

// A datasource's error reaches the person previewing as the text the task
// would show (UserFailureMessage), never the datasource's own words: the
// SQL, table names, hosts stay in the log.
TEST_F(ExportPreviewTest, ADatasourceErrorIsAnsweredWithTheTasksClassifiedText) {
  RowSourceFactory failing =
      [this](const task::Task&, const registry::ExportDefinition&,
             const registry::RegistrySnapshot&) -> StatusOr<std::unique_ptr<source::RowSource>> {
    return std::unique_ptr<source::RowSource>(new StatementSource(
        source::NewSqliteDatasource(path_), "SELECT secret_col FROM db7_internal_table", &quick_));
  };
  auto refused = ReadPreview(failing, TaskOf("u1"), *snapshot_, 5);
  ASSERT_FALSE(refused.ok());
  ASSERT_TRUE(quick_.Outcome().code() != StatusCode::kOk);
  const Status raw = quick_.Outcome();
  EXPECT_NE(raw.message().find("db7_internal_table"), std::string::npos) << raw.ToString();
  EXPECT_EQ(refused.status().code(), raw.code());
  EXPECT_EQ(refused.status().message(),
            UserFailureMessage(FailureCode(raw), raw, FailureOrigin::kSource));
  EXPECT_EQ(refused.status().message().find("db7_internal_table"), std::string::npos);

  // A source that cannot even be opened, and a transient failure: the same rule.
  RowSourceFactory unopened =
      [](const task::Task&, const registry::ExportDefinition&,
         const registry::RegistrySnapshot&) -> StatusOr<std::unique_ptr<source::RowSource>> {
    return Unavailable("connect to db-7.internal:3306: connection refused");
  };
  auto down = ReadPreview(unopened, TaskOf("u1"), *snapshot_, 5);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(down.status().message(), "The data source was unavailable");
}

}  // namespace
}  // namespace export_center::attempt
