// Consumer, publisher and DLQ handler end to end inside one process, on a real
// SQLite store, real local storage and the real CSV writer; only the row
// source is scripted.

#include "dispatch/consumer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <random>
#include <thread>

#include "dispatch/dlq_handler.h"
#include "dispatch/embedded_command_channel.h"
#include "dispatch/outbox_publisher.h"
#include "render/csv_writer.h"
#include "render/xlsx_template_writer.h"
#include "dispatch/reconciler.h"
#include "storage/local_export_storage.h"
#include "store/database.h"
#include "store/sqlite/sqlite_task_store.h"

namespace export_center::dispatch {
namespace {

using namespace std::chrono_literals;
using task::TaskState;

// Serves scripted pages; a page may instead fail with a Status or run a hook.
struct Script {
  std::vector<task::Column> columns = {{"id", "编号", task::ColumnType::kInteger, 10, 0, ""},
                                       {"name", "名称", task::ColumnType::kString, 20, 0, ""}};
  std::vector<std::vector<task::Row>> pages;
  std::map<size_t, Status> fail_at;                  // page index → error
  std::map<size_t, std::function<void()>> hook_at;   // page index → side effect
  std::shared_ptr<const std::string> excel_template;  // as an SQL contract may supply
  int sources_made = 0;
};

class ScriptedSource : public source::RowSource {
 public:
  explicit ScriptedSource(Script* script) : script_(script) {}
  const std::vector<task::Column>& columns() const override { return script_->columns; }
  std::shared_ptr<const std::string> excel_template() const override {
    return script_->excel_template;
  }
  StatusOr<source::Page> NextPage() override {
    const size_t i = next_++;
    if (auto hook = script_->hook_at.find(i); hook != script_->hook_at.end()) hook->second();
    if (auto err = script_->fail_at.find(i); err != script_->fail_at.end()) return err->second;
    source::Page page;
    if (i < script_->pages.size()) page.rows = script_->pages[i];
    page.has_more = i + 1 < script_->pages.size();
    return page;
  }

 private:
  Script* script_;
  size_t next_ = 0;
};

std::vector<task::Row> Rows(int from, int count, size_t text_length = 3) {
  std::vector<task::Row> rows;
  std::mt19937 rng(from);
  for (int i = from; i < from + count; ++i) {
    std::string text;
    for (size_t k = 0; k < text_length; ++k) text.push_back(static_cast<char>('a' + rng() % 26));
    rows.push_back({int64_t{i}, text});
  }
  return rows;
}

class ConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ec-consumer-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto opened = store::OpenSqliteTaskStoreWithDatabase((dir_ / "db.sqlite").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened->store);
    db_ = opened->db;
    ASSERT_TRUE(store_->Migrate().ok());
    storage_ = std::move(storage::NewLocalExportStorage((dir_ / "files").string()).value());
    definition_.name = "TEST_LIST";
    definition_.title = "测试";
    definition_.service = "svc";
    definition_.max_rows = 1000;
    RegisterDefinition();
    channel_ = NewEmbeddedCommandChannel(3);
    limits_.max_file_bytes = 10 * 1024 * 1024;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // (Re)publishes definition_ as the only registered type.
  void RegisterDefinition() {
    registry::RegistrySnapshot snapshot;
    snapshot.definitions[definition_.name] = definition_;
    registry_ = std::make_unique<registry::Registry>(snapshot);
  }

  AttemptDeps Deps() {
    AttemptDeps deps;
    deps.store = store_.get();
    deps.storage = storage_.get();
    deps.registry = registry_.get();
    deps.make_source = [this](const task::Task&, const registry::ExportDefinition&,
                              const registry::RegistrySnapshot&)
        -> StatusOr<std::unique_ptr<source::RowSource>> {
      ++script_.sources_made;
      return std::unique_ptr<source::RowSource>(new ScriptedSource(&script_));
    };
    deps.make_writer = [](task::FileFormat, ByteSink* sink, const render::WriterOptions& o)
        -> StatusOr<std::unique_ptr<render::Writer>> { return render::NewCsvWriter(sink, o); };
    deps.consumer.concurrency = 1;
    deps.consumer.heartbeat_seconds = 1;
    deps.consumer.retry_backoff_seconds = {60, 900};
    deps.limits = limits_;
    deps.instance = "test-instance";
    return deps;
  }

  int64_t CreateTask(const std::string& user = "u1",
                     task::FileFormat format = task::FileFormat::kCsv) {
    store::NewTask t;
    t.tenant_id = "1";
    t.requested_by = user;
    t.export_type = "TEST_LIST";
    t.task_name = "测试导出";
    t.format = format;
    t.parameters_json = "{}";
    t.params_hash = "h-" + user;
    auto created = store_->CreateTask(t, store::CreateLimits{});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created->task.id;
  }

  // Publishes due outbox rows and lets one consumer handle what arrives.
  int PublishAndConsume(Consumer& consumer) {
    OutboxPublisher publisher(store_.get(), channel_.get(), PublisherOptions{}, "pub");
    publisher.PublishDueOnce();
    int handled = 0;
    while (channel_->ConsumeOne(20ms, [&](const Delivery& d) { return consumer.Handle(d); })) {
      ++handled;
    }
    return handled;
  }

  task::Task Task(int64_t id) { return store_->GetTask(id).value(); }
  size_t StoredFiles() { return storage_->List().value().size(); }

  std::filesystem::path dir_;
  std::unique_ptr<store::TaskStore> store_;
  std::shared_ptr<store::Database> db_;
  std::unique_ptr<storage::ExportStorage> storage_;
  std::unique_ptr<registry::Registry> registry_;
  std::unique_ptr<CommandChannel> channel_;
  registry::ExportDefinition definition_;
  task::LimitsOptions limits_;
  Script script_;
};

TEST_F(ConsumerTest, HappyPathCommitsOneFileWithEveryRow) {
  script_.pages = {Rows(1, 2), Rows(3, 2), Rows(5, 2)};
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  EXPECT_EQ(PublishAndConsume(consumer), 1);
  task::Task t = Task(id);
  ASSERT_EQ(t.status, TaskState::kSucceeded) << t.failure_message.value_or("");
  EXPECT_EQ(t.total_rows, 6);
  EXPECT_EQ(t.processed_rows, 6);
  ASSERT_TRUE(t.object_key.has_value());
  EXPECT_TRUE(t.file_name->ends_with(".csv"));
  auto files = storage_->List().value();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].key, *t.object_key);
  EXPECT_EQ(static_cast<int64_t>(files[0].size), *t.size_bytes);
  EXPECT_TRUE(t.expires_at.has_value());
}

TEST_F(ConsumerTest, DefinitionFileOptionsReachTheWriterAndTheStoredName) {
  definition_.csv_gzip = true;
  RegisterDefinition();
  script_.pages = {Rows(1, 3)};
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  ASSERT_EQ(t.status, TaskState::kSucceeded) << t.failure_message.value_or("");
  EXPECT_TRUE(t.file_name->ends_with(".csv.gz")) << *t.file_name;
  EXPECT_TRUE(t.object_key->ends_with(".csv.gz")) << *t.object_key;
  EXPECT_EQ(t.content_type, "application/gzip");
  auto reader = storage_->Open(*t.object_key).value();
  std::string head;
  ASSERT_TRUE(reader->ReadAt(0, 2, &head).ok());
  EXPECT_EQ(head, "\x1f\x8b");  // a gzip member
}

// Runs a python snippet with Debian's python3 (openpyxl); returns its stdout.
std::string Python(const std::string& script) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("ec-py-" + std::to_string(::getpid()) + ".py");
  { std::ofstream(path) << script; }
  std::string out;
  FILE* pipe = ::popen(("/usr/bin/python3 " + path).c_str(), "r");
  char buf[4096];
  while (pipe && std::fgets(buf, sizeof buf, pipe)) out += buf;
  if (pipe) ::pclose(pipe);
  std::filesystem::remove(path);
  return out;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(ConsumerTest, TheSourcesExcelTemplateIsFilledInsteadOfThePlainLayout) {
  const auto tpl = dir_ / "template.xlsx";
  Python("import openpyxl\nwb = openpyxl.Workbook(); ws = wb.active\n"
         "ws['A1'] = '{taskName}'; ws['A3'] = '{.id}'; ws['B3'] = '{.name}'\n"
         "ws['A5'] = 'footer'\nwb.save('" + tpl.string() + "')\n");
  script_.excel_template = std::make_shared<const std::string>(ReadFile(tpl));
  ASSERT_GT(script_.excel_template->size(), 100u) << "openpyxl made no template";
  script_.pages = {Rows(1, 2), Rows(3, 1)};
  AttemptDeps deps = Deps();
  deps.make_writer = [](task::FileFormat, ByteSink* sink, const render::WriterOptions& o)
      -> StatusOr<std::unique_ptr<render::Writer>> {
    EXPECT_NE(o.xlsx_template, nullptr);
    return render::NewXlsxTemplateWriter(sink, o, o.xlsx_template, o.template_values_json);
  };
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask("u1", task::FileFormat::kXlsx);
  PublishAndConsume(consumer);
  task::Task done = Task(id);
  ASSERT_EQ(done.status, TaskState::kSucceeded) << done.failure_message.value_or("");
  const std::string out =
      Python("import openpyxl\nws = openpyxl.load_workbook('" +
             (dir_ / "files" / *done.object_key).string() +
             "').active\nfor row in ws.iter_rows(values_only=True): print(list(row))\n");
  EXPECT_NE(out.find("测试导出"), std::string::npos) << out;  // {taskName}
  EXPECT_NE(out.find("[1, "), std::string::npos) << out;
  EXPECT_NE(out.find("[3, "), std::string::npos) << out;
  EXPECT_NE(out.find("footer"), std::string::npos) << out;
  EXPECT_LT(out.find("[3, "), out.find("footer")) << "the footer shifts below the list";
}

TEST_F(ConsumerTest, PermanentProviderErrorFailsTheTaskAndDeletesThePartialFile) {
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  script_.fail_at[1] = InvalidArgument("row 3, column amount: value \"abc\" is not a DECIMAL");
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "INVALID_DATA");
  EXPECT_NE(t.failure_message->find("not a DECIMAL"), std::string::npos);
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, TransientErrorSchedulesARetryWithANewVersionAndBackoff) {
  script_.pages = {Rows(1, 2)};
  script_.fail_at[0] = Unavailable("provider answered HTTP 503");
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_EQ(t.attempt_count, 1);
  const int64_t now = store_->DatabaseNowMs().value();
  EXPECT_GT(t.next_retry_at, now + 40000);  // 60 s −20 %, minus test time
  auto outbox = store_->ListOutboxForTask(id).value();
  ASSERT_EQ(outbox.size(), 2u);
  bool has_v2 = false;
  for (const auto& o : outbox) {
    if (o.dispatch_version == 2) {
      has_v2 = true;
      EXPECT_EQ(o.next_retry_at, t.next_retry_at);
    }
  }
  EXPECT_TRUE(has_v2);
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, MaxRowsIsEnforcedBeforeTheRowIsWritten) {
  definition_.max_rows = 3;
  RegisterDefinition();
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "LIMIT_EXCEEDED");
  EXPECT_NE(t.failure_message->find("3 rows"), std::string::npos);
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, FileSizeCapStopsTheExportWhileWriting) {
  limits_.max_file_bytes = 4096;
  script_.pages = {Rows(1, 50, 400), Rows(51, 50, 400)};  // ~40 KB of random text
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "LIMIT_EXCEEDED");
  EXPECT_NE(t.failure_message->find("4096"), std::string::npos);
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, CancelRequestedWhileRunningEndsCancelledWithoutAFile) {
  script_.pages = {Rows(1, 2), Rows(3, 2), Rows(5, 2)};
  int64_t id = 0;
  script_.hook_at[1] = [&] { ASSERT_TRUE(store_->RequestCancel(id).ok()); };
  Consumer consumer(channel_.get(), Deps());
  id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kCancelled);
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, DuplicateCommandsExecuteOnce) {
  script_.pages = {Rows(1, 2)};
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  const auto outbox = store_->ListOutboxForTask(id).value().at(0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(channel_->Publish(outbox.payload_json, {}).ok());
  }
  int handled = 0;
  while (channel_->ConsumeOne(20ms, [&](const Delivery& d) { return consumer.Handle(d); })) {
    ++handled;
  }
  EXPECT_EQ(handled, 10);
  EXPECT_EQ(script_.sources_made, 1);
  EXPECT_EQ(Task(id).status, TaskState::kSucceeded);
  EXPECT_EQ(StoredFiles(), 1u);
}

TEST_F(ConsumerTest, PoisonCommandIsDeadLetteredAndQuarantinedFromItsProperties) {
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  const auto outbox = store_->ListOutboxForTask(id).value().at(0);
  task::CommandProperties props = {{"taskId", std::to_string(id)},
                                   {"dispatchVersion", "1"},
                                   {"eventId", outbox.event_id},
                                   {"schemaVersion", "1"}};
  ASSERT_TRUE(channel_->Publish("{\"schemaVersion\": 1, \"taskId\": ", props).ok());
  int rejected = 0;
  while (channel_->ConsumeOne(20ms, [&](const Delivery& d) {
    DeliveryOutcome o = consumer.Handle(d);
    if (o == DeliveryOutcome::kReject) ++rejected;
    return o;
  })) {
  }
  EXPECT_EQ(rejected, 3);
  EXPECT_EQ(script_.sources_made, 0);
  int dlq_count = 0;
  DlqHandler dlq(store_.get(), channel_.get(), [&] { ++dlq_count; });
  ASSERT_TRUE(channel_->ConsumeDeadLetter(100ms, [&](const Delivery& d) {
    EXPECT_TRUE(dlq.Handle(d).ok());
  }));
  EXPECT_EQ(dlq_count, 1);
  EXPECT_EQ(Task(id).status, TaskState::kFailed);
  auto rows = store_->ListOutboxForTask(id).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, store::OutboxStatus::kQuarantined);
}

TEST_F(ConsumerTest, DeadLetterOfAnOldVersionOrWithoutPropertiesHarmsNoTask) {
  const int64_t id = CreateTask();
  const auto v1 = store_->ListOutboxForTask(id).value().at(0);
  DlqHandler dlq(store_.get(), channel_.get(), {});
  // No usable properties: logged, nothing touched.
  EXPECT_FALSE(dlq.Handle(Delivery{"garbage", {}, 3}).ok());
  // Wrong event id for the current version: not this task's command.
  Delivery foreign{"garbage",
                   {{"taskId", std::to_string(id)}, {"dispatchVersion", "1"}, {"eventId", "nope"}},
                   3};
  EXPECT_FALSE(dlq.Handle(foreign).ok());
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(store_->ListOutboxForTask(id).value().at(0).status, v1.status);
}

class RefusingChannel : public CommandChannel {
 public:
  Status Publish(const std::string&, const task::CommandProperties&) override {
    return Unavailable("broker down");
  }
  bool ConsumeOne(std::chrono::milliseconds,
                  const std::function<DeliveryOutcome(const Delivery&)>&) override {
    return false;
  }
  bool ConsumeDeadLetter(std::chrono::milliseconds,
                         const std::function<void(const Delivery&)>&) override {
    return false;
  }
  void Close() override {}
};

TEST_F(ConsumerTest, FailedSendGoesBackToPendingWithTheFirstBackoffStep) {
  const int64_t id = CreateTask();
  RefusingChannel refusing;
  OutboxPublisher publisher(store_.get(), &refusing, PublisherOptions{}, "pub");
  EXPECT_EQ(publisher.PublishDueOnce(), 1);
  auto row = store_->ListOutboxForTask(id).value().at(0);
  EXPECT_EQ(row.status, store::OutboxStatus::kPending);
  EXPECT_EQ(row.attempt_count, 1);
  EXPECT_EQ(row.last_error, "broker down");
  const int64_t now = store_->DatabaseNowMs().value();
  EXPECT_GT(row.next_retry_at, now + 3000);
  EXPECT_LE(row.next_retry_at, now + 5000);
  EXPECT_EQ(publisher.PublishDueOnce(), 0);  // not due yet
}

TEST_F(ConsumerTest, ShutdownStopsARunningExportAtASafePointAndHandsItBack) {
  script_.pages = {Rows(1, 2), Rows(3, 2), Rows(5, 2)};
  std::atomic<bool> in_page{false};
  std::atomic<bool> release{false};
  script_.hook_at[1] = [&] {
    in_page = true;
    while (!release) std::this_thread::sleep_for(5ms);  // a slow provider page
  };
  AttemptDeps deps = Deps();
  deps.consumer.shutdown_grace_seconds = 0;
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  OutboxPublisher publisher(store_.get(), channel_.get(), PublisherOptions{}, "pub");
  publisher.PublishDueOnce();
  consumer.Start();
  while (!in_page) std::this_thread::sleep_for(5ms);
  std::thread stopper([&] { consumer.Stop(); });
  std::this_thread::sleep_for(50ms);
  release = true;  // the page returns; the next safe point sees the shutdown
  stopper.join();
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_LE(t.next_retry_at, store_->DatabaseNowMs().value());  // due at once after restart
  EXPECT_EQ(StoredFiles(), 0u);
  EXPECT_TRUE(storage_->ListPartials().value().empty());
}

// A writer whose Finish (compression, the final flush) is slow and runs a
// hook first: the phase the first design left without lease renewal.
class SlowFinishWriter : public render::Writer {
 public:
  SlowFinishWriter(std::unique_ptr<render::Writer> inner, std::function<void()> on_finish)
      : inner_(std::move(inner)), on_finish_(std::move(on_finish)) {}
  Status Begin(const std::vector<task::Column>& c) override { return inner_->Begin(c); }
  Status WriteRow(const task::Row& row) override { return inner_->WriteRow(row); }
  StatusOr<render::WriteSummary> Finish() override {
    on_finish_();
    return inner_->Finish();
  }

 private:
  std::unique_ptr<render::Writer> inner_;
  std::function<void()> on_finish_;
};

AttemptDeps WithSlowFinish(AttemptDeps deps, std::function<void()> on_finish) {
  deps.make_writer = [on_finish](task::FileFormat, ByteSink* sink, const render::WriterOptions& o)
      -> StatusOr<std::unique_ptr<render::Writer>> {
    return std::unique_ptr<render::Writer>(
        new SlowFinishWriter(render::NewCsvWriter(sink, o), on_finish));
  };
  return deps;
}

TEST_F(ConsumerTest, WatchdogRenewsTheLeaseThroughASlowFinalWrite) {
  script_.pages = {Rows(1, 2)};
  int64_t id = 0;
  int recovered = -1;
  AttemptDeps deps = WithSlowFinish(Deps(), [&] {
    // The final write outlasts the 2 s lease; the reconciler runs meanwhile.
    std::this_thread::sleep_for(3500ms);
    Reconciler reconciler(store_.get(), storage_.get(), ReconcilerOptions{}, {}, {});
    recovered = reconciler.RunOnce()["lease_recover"];
  });
  deps.consumer.lease_seconds = 2;
  deps.consumer.heartbeat_seconds = 1;
  Consumer consumer(channel_.get(), deps);
  id = CreateTask();
  PublishAndConsume(consumer);
  EXPECT_EQ(recovered, 0);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kSucceeded) << t.failure_message.value_or("");
  EXPECT_EQ(t.dispatch_version, 1);
  EXPECT_EQ(StoredFiles(), 1u);
}

TEST_F(ConsumerTest, LostLeaseAbortsAtTheNextSafePointAndWritesNothing) {
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  int64_t id = 0;
  script_.hook_at[1] = [&] {
    // Another instance recovered the task meanwhile.
    ASSERT_TRUE(db_->Exec("UPDATE export_task SET dispatch_version = 2, lease_owner = 'other'"
                          " WHERE id = ?", {id}).ok());
  };
  Consumer consumer(channel_.get(), Deps());
  id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kRunning);  // untouched: it belongs to the other attempt
  EXPECT_EQ(t.lease_owner, "other");
  EXPECT_EQ(StoredFiles(), 0u);
  EXPECT_TRUE(storage_->ListPartials().value().empty());
}

TEST_F(ConsumerTest, CommitPastTheDeadlineFailsDeletesTheFileAndRetriesAsTimeout) {
  script_.pages = {Rows(1, 2)};
  int64_t id = 0;
  AttemptDeps deps = WithSlowFinish(Deps(), [&] {
    // The deadline passes between the last check and the commit statement.
    ASSERT_TRUE(db_->Exec("UPDATE export_task SET execution_deadline_at = 0 WHERE id = ?", {id})
                    .ok());
  });
  Consumer consumer(channel_.get(), deps);
  id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_NE(t.failure_message.value_or("").find("maximum duration"), std::string::npos);
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, ThirtyFailedSendsLeaveTheRowPendingAtTheLastBackoffStep) {
  const int64_t id = CreateTask();
  RefusingChannel refusing;
  OutboxPublisher publisher(store_.get(), &refusing, PublisherOptions{}, "pub");
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(publisher.PublishDueOnce(), 1) << "send " << i + 1;
    ASSERT_TRUE(db_->Exec("UPDATE export_outbox SET next_retry_at = 0").ok());  // skip the wait
  }
  auto row = store_->ListOutboxForTask(id).value().at(0);
  EXPECT_EQ(row.status, store::OutboxStatus::kPending);
  EXPECT_EQ(row.attempt_count, 30);
  EXPECT_EQ(Task(id).dispatch_version, 1);  // send failures never touch the task
}

TEST(MakeFileName, DropsSeparatorsControlAndBidiCharacters) {
  task::Task t;
  t.id = 42;
  t.task_name = "客户/列表\u202E\x01..\\x";
  t.export_type = "CUSTOMER_LIST";
  t.format = task::FileFormat::kXlsx;
  registry::ExportDefinition def;
  def.file_name_pattern = "{taskName}_{taskId}";
  const std::string name = MakeFileName(def, t, "xlsx");
  EXPECT_EQ(name, "客户列表..x_42.xlsx");
}

}  // namespace
}  // namespace export_center::dispatch
