// Consumer, publisher and DLQ handler end to end inside one process, on a real
// SQLite store, real local storage and the real CSV writer; only the row
// source is scripted.

#include "dispatch/consumer.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "attempt/lease_watchdog.h"
#include "common/file_key_ring.h"
#include "common/utf8.h"
#include "dispatch/dlq_handler.h"
#include "dispatch/embedded_command_channel.h"
#include "dispatch/outbox_publisher.h"
#include "dispatch/reconciler.h"
#include "faulty_task_store.h"  // beside this test
#include "render/csv_writer.h"
#include "render/xlsx_template_writer.h"
#include "source/common/business_reply.h"
#include "statement_source.h"  // beside this test
#include "storage/local_export_storage.h"
#include "task/table.h"
#ifdef EC_TEST_WITH_S3
#include "http/httplib/httplib_http_client.h"
#include "storage/s3/s3_export_storage.h"
#endif
#include "store/database.h"
#include "store/sqlite/sqlite_task_store.h"

namespace export_center::dispatch {

using attempt::AttemptDeps;
using attempt::AttemptEnd;
using attempt::IsFinal;
using attempt::kEndlessSql;
using attempt::LeaseWatchdog;
using attempt::MakeFileName;
using attempt::StatementProbe;
using attempt::StatementSource;
namespace {

using namespace std::chrono_literals;
using task::TaskState;

// Counts the dead letters a DlqHandler reports.
struct DeadLetterCounter : DlqObserver {
  std::atomic<int> count{0};
  void DeadLetterReceived() override { ++count; }
};

// Appends each attempt's end to `ends`.
class EndRecorder : public attempt::AttemptObserver {
 public:
  explicit EndRecorder(std::vector<AttemptEnd>* ends) : ends_(ends) {}
  void AttemptEnded(const task::Task&, AttemptEnd end, double) override { ends_->push_back(end); }

 private:
  std::vector<AttemptEnd>* ends_;
};

// Serves scripted pages; a page may instead fail with a Status or run a hook.
struct Script {
  std::vector<task::Column> columns = {{"id", "编号", task::ColumnType::kInteger, 10, 0, ""},
                                       {"name", "名称", task::ColumnType::kString, 20, 0, ""}};
  std::vector<std::vector<task::Row>> pages;
  std::map<size_t, Status> fail_at;                   // page index → error
  std::map<size_t, std::string> throw_at;             // page index → std::runtime_error
  std::map<size_t, std::function<void()>> hook_at;    // page index → side effect
  std::shared_ptr<const std::string> excel_template;  // as an SQL contract may supply
  std::optional<std::string> failure_code;            // as the SQL source's UNSAFE_TEMPLATE
  std::optional<task::TaskState> terminal_state;      // as the sql-template source sets
  int sources_made = 0;
};

class ScriptedSource : public source::RowSource {
 public:
  explicit ScriptedSource(Script* script) : script_(script) {}
  const std::vector<task::Column>& columns() const override { return script_->columns; }
  // The template comes with the first page; a failure's facts after it.
  source::SourceFacts facts() const override {
    return {script_->excel_template, {}, script_->terminal_state, script_->failure_code};
  }
  StatusOr<source::Page> NextPage() override {
    const size_t i = next_++;
    if (auto hook = script_->hook_at.find(i); hook != script_->hook_at.end()) hook->second();
    if (auto err = script_->fail_at.find(i); err != script_->fail_at.end()) return err->second;
    if (auto t = script_->throw_at.find(i); t != script_->throw_at.end()) {
      throw std::runtime_error(t->second);
    }
    source::Page page;
    if (i < script_->pages.size()) page.rows = script_->pages[i];
    page.has_more = i + 1 < script_->pages.size();
    if (i == 0) page.facts = source::SourceFacts{script_->excel_template};
    return page;
  }

 private:
  Script* script_;
  size_t next_ = 0;
};

// Captures what the process logs while it lives (the default logger's lines).
class LogCapture {
 public:
  LogCapture()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256)),
        previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("consumer-test", sink_);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  // The first line holding every one of `parts`, or "".
  std::string Line(std::initializer_list<std::string> parts) const {
    for (const std::string& line : sink_->last_formatted()) {
      bool all = true;
      for (const std::string& p : parts) all = all && line.find(p) != std::string::npos;
      if (all) return line;
    }
    return "";
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
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
    deps.make_source =
        [this](const task::Task&, const registry::ExportDefinition&,
               const registry::RegistrySnapshot&) -> StatusOr<std::unique_ptr<source::RowSource>> {
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
                     task::FileFormat format = task::FileFormat::kCsv,
                     store::CreateLimits limits = {}, task::ColumnPolicy policy = {}) {
    store::NewTask t;
    t.column_policy = std::move(policy);
    t.tenant_id = "1";
    t.requested_by = user;
    t.export_type = "TEST_LIST";
    t.task_name = "测试导出";
    t.format = format;
    t.parameters_json = "{}";
    t.params_hash = "h-" + user;
    auto created = store_->CreateTask(t, limits);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created->task.id;
  }
  // n tasks of n users, past the per-type active limit: n outbox rows.
  std::vector<int64_t> CreateTasks(int n) {
    store::CreateLimits limits;
    limits.max_active_per_type = n;
    std::vector<int64_t> ids;
    for (int i = 0; i < n; ++i) {
      ids.push_back(CreateTask("u" + std::to_string(i), task::FileFormat::kCsv, limits));
    }
    return ids;
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

// The requester's language recorded at create (task::Task::locale) reaches the
// source of every attempt — the first and a manual retry's — read back from
// the store, so both write the same titles and labels.
TEST_F(ConsumerTest, EveryAttemptsSourceSeesTheLanguageRecordedAtCreate) {
  store::NewTask nt;
  nt.tenant_id = "1";
  nt.requested_by = "u1";
  nt.export_type = "TEST_LIST";
  nt.task_name = "测试导出";
  nt.format = task::FileFormat::kCsv;
  nt.parameters_json = "{}";
  nt.params_hash = "h-locale";
  nt.locale = "zh-CN";
  const int64_t id = store_->CreateTask(nt, {}).value().task.id;
  std::vector<std::string> seen;
  AttemptDeps deps = Deps();
  deps.make_source =
      [&](const task::Task& t, const registry::ExportDefinition&,
          const registry::RegistrySnapshot&) -> StatusOr<std::unique_ptr<source::RowSource>> {
    seen.push_back(t.locale);
    return std::unique_ptr<source::RowSource>(new ScriptedSource(&script_));
  };
  script_.pages = {Rows(1, 2)};
  script_.fail_at[0] = InvalidArgument("row 1, column id: value \"x\" is not an INTEGER");
  Consumer consumer(channel_.get(), deps);
  PublishAndConsume(consumer);
  ASSERT_EQ(Task(id).status, TaskState::kFailed);
  script_.fail_at.clear();
  ASSERT_TRUE(store_->ManualRetry(id, "trace-retry").ok());
  PublishAndConsume(consumer);
  ASSERT_EQ(Task(id).status, TaskState::kSucceeded) << Task(id).failure_message.value_or("");
  EXPECT_EQ(seen, (std::vector<std::string>{"zh-CN", "zh-CN"}));
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
  const std::string path =
      std::filesystem::temp_directory_path() / ("ec-py-" + std::to_string(::getpid()) + ".py");
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
  Python(
      "import openpyxl\nwb = openpyxl.Workbook(); ws = wb.active\n"
      "ws['A1'] = '{taskName}'; ws['A3'] = '{.id}'; ws['B3'] = '{.name}'\n"
      "ws['A5'] = 'footer'\nwb.save('" +
      tpl.string() + "')\n");
  script_.excel_template = std::make_shared<const std::string>(ReadFile(tpl));
  ASSERT_GT(script_.excel_template->size(), 100u) << "openpyxl made no template";
  script_.pages = {Rows(1, 2), Rows(3, 1)};
  AttemptDeps deps = Deps();
  deps.make_writer =
      [](task::FileFormat, ByteSink* sink,
         const render::WriterOptions& o) -> StatusOr<std::unique_ptr<render::Writer>> {
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
  LogCapture log;
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "INVALID_DATA");
  // A finding about a cell is the user's to report: kept (attempt/failure_message.h).
  EXPECT_EQ(t.failure_message, "row 3, column amount: value \"abc\" is not a DECIMAL");
  EXPECT_NE(log.Line({"task " + std::to_string(id), "INVALID_DATA", "not a DECIMAL"}), "");
  EXPECT_EQ(StoredFiles(), 0u);
}

// docs/task-lifecycle.md#failure-classes: a cell of a governed column that
// does not parse is named, its value withheld — in the stored message, the
// operators' detail and the log; a plain column's value stays quoted.
TEST_F(ConsumerTest, AGovernedCellsValueNeverReachesTheMessageTheDetailOrTheLog) {
  const task::Column amount{"amount", "金额", task::ColumnType::kDecimal, 10, 2, ""};
  const Status bad_cell =
      task::ParseWireValue(amount, nlohmann::json("SECRET-1234")).status().WithContext("row 3");
  ASSERT_FALSE(bad_cell.ok());
  task::ColumnPolicy omitted;
  omitted.decisions.push_back(task::ColumnDecision{"amount", task::ColumnAction::kOmit, 0, 0, 64});
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  script_.fail_at[1] = bad_cell;
  LogCapture log;
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask("u1", task::FileFormat::kCsv, {}, omitted);
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(
      t.failure_message,
      "row 3: column 'amount' (DECIMAL): value [withheld: a governed column] is not a decimal");
  EXPECT_EQ(t.failure_detail, "InvalidArgument: " + *t.failure_message);
  EXPECT_EQ(log.Line({"SECRET-1234"}), "");
  EXPECT_NE(log.Line({"task " + std::to_string(id), "INVALID_DATA", "withheld"}), "");

  // The requester who may see the column gets its value quoted.
  const int64_t plain = CreateTask("u2");
  PublishAndConsume(consumer);
  EXPECT_NE(Task(plain).failure_message.value_or("").find("\"SECRET-1234\""), std::string::npos)
      << Task(plain).failure_message.value_or("");
}

// docs/conventions.md#threads: an exception on the prefetch worker (which
// runs the source) fails the attempt by the usual rules — Internal is
// permanent — and the process, the consumer and the file system are clean.
TEST_F(ConsumerTest, ASourceThatThrowsOnThePrefetchThreadFailsTheTaskAsInternal) {
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  script_.throw_at[1] = "type_error.316: invalid UTF-8 byte";
  LogCapture log;
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "INTERNAL");
  EXPECT_EQ(t.failure_message, "Internal error; support can find the details under the task id");
  EXPECT_NE(log.Line({"task " + std::to_string(id), "thread prefetch", "type_error.316"}), "");
  EXPECT_NE(t.failure_detail.value_or("").find("type_error.316"), std::string::npos)
      << t.failure_detail.value_or("");
  EXPECT_EQ(StoredFiles(), 0u);
  // The consumer still runs the next export.
  script_.throw_at.clear();
  const int64_t next = CreateTask("u2");
  PublishAndConsume(consumer);
  EXPECT_EQ(Task(next).status, TaskState::kSucceeded);
}

// An exception on the consumer's own thread (here the writer factory) ends
// the attempt FAILED too, never RUNNING until lease recovery.
TEST_F(ConsumerTest, AWriterThatThrowsOnTheConsumerThreadFailsTheTaskAsInternal) {
  script_.pages = {Rows(1, 2)};
  AttemptDeps deps = Deps();
  deps.make_writer = [](task::FileFormat, ByteSink*,
                        const render::WriterOptions&) -> StatusOr<std::unique_ptr<render::Writer>> {
    throw 17;  // not even a std::exception
  };
  LogCapture log;
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "INTERNAL");
  EXPECT_EQ(t.failure_message, "Internal error; support can find the details under the task id");
  EXPECT_NE(log.Line({"task " + std::to_string(id), "thread attempt"}), "");
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, TheSourcesFailureCodeIsTheTasks) {
  // The sql-template source refuses a contract whose ${} reads user-typed
  // text (docs/sql-template.md#what--may-read) before its first page.
  script_.pages = {Rows(1, 2)};
  script_.fail_at[0] = InvalidArgument("unsafe template (sqlTemplate): ${kw} reads ...");
  script_.failure_code = "UNSAFE_TEMPLATE";
  LogCapture log;
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "UNSAFE_TEMPLATE");
  EXPECT_EQ(t.failure_message, "unsafe template (sqlTemplate): ${kw} reads ...");
  EXPECT_NE(log.Line({"task " + std::to_string(id), "UNSAFE_TEMPLATE", "${kw}"}), "");
  EXPECT_EQ(t.dispatch_version, 1) << "permanent: not retried";
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

// docs/task-lifecycle.md#failure-classes: the failure message a user sees is classified; the
// detail (an S3 error naming the store's endpoint URL) is logged under the
// task id.
#ifdef EC_TEST_WITH_S3
TEST_F(ConsumerTest, AStorageErrorNamingTheEndpointShowsAClassifiedMessage) {
  // A loopback port nobody listens on: the S3 client's error names the URL.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  storage::S3StorageOptions s3;
  s3.endpoint = endpoint;
  s3.bucket = "exports";
  s3.access_key = "test-access-key";
  s3.secret_key = "test-secret-key";
  s3.path_style = true;
  s3.connect_timeout_ms = 500;
  s3.io_timeout_ms = 1000;
  auto opened = storage::NewS3ExportStorage(s3, export_center::http::HttplibClientFactory());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<storage::ExportStorage> s3_storage = std::move(opened).value();
  script_.pages = {Rows(1, 2)};
  AttemptDeps deps = Deps();
  deps.storage = s3_storage.get();
  LogCapture log;
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending) << "a storage outage is retried";
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_EQ(t.failure_message, "Storage was unavailable");
  EXPECT_EQ(t.failure_message.value_or("").find("127.0.0.1"), std::string::npos);
  // The operators' console shows the detail the user gets classified.
  EXPECT_NE(t.failure_detail.value_or("").find(endpoint), std::string::npos)
      << t.failure_detail.value_or("");
  EXPECT_NE(log.Line({"task " + std::to_string(id), "origin=storage", endpoint}), "")
      << "the detail, endpoint included, is in the log under the task id";
}
#endif

// A business service's deliberate refusal (a 4xx with a message) is shown to
// the user as it sent it (docs/provider-contract.md#error-classes); a 5xx's
// message is not.
TEST_F(ConsumerTest, ABusinessRefusalKeepsItsMessageForTheUser) {
  script_.pages = {Rows(1, 2)};
  script_.fail_at[0] =
      source::BusinessError(403, "provider answered code", "您无权导出该商户的订单\n(tenant 7)");
  Consumer consumer(channel_.get(), Deps());
  const int64_t refused = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(refused);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "PROVIDER_REJECTED");
  EXPECT_EQ(t.failure_message, "您无权导出该商户的订单 (tenant 7)");

  script_.fail_at[0] = source::BusinessError(500, "provider answered code",
                                             "java.sql.SQLException: db-7.internal:3306 refused");
  const int64_t broken = CreateTask("u2");
  PublishAndConsume(consumer);
  EXPECT_EQ(Task(broken).failure_message, "The data source was unavailable");
}

TEST_F(ConsumerTest, MaxRowsIsEnforcedBeforeTheRowIsWritten) {
  definition_.max_rows = 3;
  RegisterDefinition();
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  LogCapture log;
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "LIMIT_EXCEEDED");
  EXPECT_NE(t.failure_message.value_or("").find("maximum of 3 rows"), std::string::npos)
      << t.failure_message.value_or("");
  EXPECT_NE(log.Line({"task " + std::to_string(id), "maximum of 3 rows"}), "");
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, FileSizeCapStopsTheExportWhileWriting) {
  limits_.max_file_bytes = 4096;
  script_.pages = {Rows(1, 50, 400), Rows(51, 50, 400)};  // ~40 KB of random text
  LogCapture log;
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "LIMIT_EXCEEDED");
  EXPECT_NE(t.failure_message.value_or("").find("4096"), std::string::npos)
      << t.failure_message.value_or("");
  EXPECT_NE(log.Line({"task " + std::to_string(id), "4096"}), "");
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

// With 200 quick pages the statements between pages are throttled by time
// (the next page is fetched while one is written), yet a cancel still stops
// the export at a page boundary long before its end.
TEST_F(ConsumerTest, CheckpointsBetweenPagesAreThrottledAndCancelStillStopsBetweenPages) {
  for (int p = 0; p < 200; ++p) script_.pages.push_back(Rows(p * 2 + 1, 2));
  FaultyTaskStore faulty(store_.get());
  AttemptDeps deps = Deps();
  deps.store = &faulty;
  Consumer quick(channel_.get(), deps);
  const int64_t done = CreateTask();
  PublishAndConsume(quick);
  EXPECT_EQ(Task(done).status, TaskState::kSucceeded);
  EXPECT_EQ(Task(done).processed_rows, 400);
  EXPECT_LT(faulty.progress_calls.load(), 20) << "not one progress write per page";
  EXPECT_LT(faulty.renew_calls.load(), 20) << "not one renewal per page";

  // Slow pages (10 ms each, 2 s in all); the user cancels at page 20.
  int64_t id = 0;
  std::atomic<int> fetched{0};
  script_ = Script();
  for (int p = 0; p < 200; ++p) {
    script_.pages.push_back(Rows(p * 2 + 1, 2));
    script_.hook_at[p] = [&] {
      ++fetched;
      std::this_thread::sleep_for(10ms);
    };
  }
  script_.hook_at[20] = [&] {
    ++fetched;
    ASSERT_TRUE(store_->RequestCancel(id).ok());
  };
  Consumer consumer(channel_.get(), Deps());
  id = CreateTask("u2");
  PublishAndConsume(consumer);
  EXPECT_EQ(Task(id).status, TaskState::kCancelled);
  EXPECT_LT(fetched.load(), 150) << "the cancel waited for the end of the export";
  EXPECT_EQ(StoredFiles(), 1u) << "only the first export's file";
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
  DeadLetterCounter dlq_count;
  DlqHandler dlq(store_.get(), channel_.get(), &dlq_count);
  ASSERT_TRUE(channel_->ConsumeDeadLetter(100ms, [&](const Delivery& d) {
    DeliveryOutcome outcome = dlq.Handle(d);
    EXPECT_EQ(outcome, DeliveryOutcome::kAck);
    return outcome;
  }));
  EXPECT_EQ(dlq_count.count, 1);
  EXPECT_EQ(Task(id).status, TaskState::kFailed);
  auto rows = store_->ListOutboxForTask(id).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, store::OutboxStatus::kQuarantined);
}

// docs/task-lifecycle.md#dead-letters-and-quarantine: the quarantine record names the real decode
// error — the JSON parser's own words — as valid UTF-8 and bounded, though the payload is 100 KB or
// has bytes that are not UTF-8, and the parser quotes them.
TEST_F(ConsumerTest, QuarantineRecordNamesTheRealDecodeError) {
  struct Case {
    std::string payload;
    std::string error;  // what the reason must name
  };
  std::string huge = "{\"schemaVersion\": 1, \"taskId\": \"";
  for (int i = 0; i < 50000; ++i) huge += "é";
  huge += "\x01\"}";
  const std::vector<Case> cases = {
      {"{\"schemaVersion\": 1, \"taskId\": ", "unexpected end of input"},
      {huge, "invalid string: control character U+0001"},       // quoting 100 KB
      {"{\"taskId\": \"\xff\xfe\"}", "ill-formed UTF-8 byte"},  // quoting them
      {"[1, 2]", "command is not a JSON object"},
      {"{\"schemaVersion\": 7}", "unsupported command schemaVersion 7"},
  };
  DlqHandler dlq(store_.get(), channel_.get());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    const int64_t id = CreateTask();
    const auto outbox = store_->ListOutboxForTask(id).value().at(0);
    Delivery dead{
        c.payload,
        {{"taskId", std::to_string(id)}, {"dispatchVersion", "1"}, {"eventId", outbox.event_id}},
        3,
        "m-" + std::to_string(id)};
    ASSERT_EQ(dlq.Handle(dead), DeliveryOutcome::kAck);
    auto rows = store_->ListOutboxForTask(id).value();
    ASSERT_EQ(rows.size(), 1u);
    ASSERT_EQ(rows[0].status, store::OutboxStatus::kQuarantined);
    const std::string reason = rows[0].last_error.value_or("");
    EXPECT_NE(reason.find("could not be decoded: "), std::string::npos) << reason;
    EXPECT_NE(reason.find(c.error), std::string::npos) << reason;
    EXPECT_TRUE(utf8::IsValid(reason)) << reason;
    EXPECT_LE(reason.size(), 1000u);
    // The user sees the classified message, not the parser's.
    EXPECT_EQ(Task(id).failure_message.value_or("").find("parse"), std::string::npos);
  }
}

TEST_F(ConsumerTest, DeadLetterOfAnOldVersionOrWithoutPropertiesHarmsNoTask) {
  const int64_t id = CreateTask();
  const auto v1 = store_->ListOutboxForTask(id).value().at(0);
  DlqHandler dlq(store_.get(), channel_.get());
  // No usable properties: logged CRITICAL and acknowledged, nothing touched.
  EXPECT_EQ(dlq.Handle(Delivery{"garbage", {{"taskId", "x"}}, 3, "m-1"}), DeliveryOutcome::kAck);
  // Wrong event id for the current version: not this task's command.
  Delivery foreign{"garbage",
                   {{"taskId", std::to_string(id)}, {"dispatchVersion", "1"}, {"eventId", "nope"}},
                   3,
                   "m-2"};
  EXPECT_EQ(dlq.Handle(foreign), DeliveryOutcome::kAck);
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
                         const std::function<DeliveryOutcome(const Delivery&)>&) override {
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

// A channel whose sends fail by a rule (call number → fails?), optionally
// slowly: a broker that is down, flaps, or hangs until the send timeout.
class ScriptedSendChannel : public RefusingChannel {
 public:
  ScriptedSendChannel(std::function<bool(int)> fails, std::chrono::milliseconds delay = 0ms)
      : fails_(std::move(fails)), delay_(delay) {}
  Status Publish(const std::string&, const task::CommandProperties&) override {
    const int call = calls_++;
    std::this_thread::sleep_for(delay_);
    return fails_(call) ? Unavailable("send timed out") : Status::Ok();
  }
  int calls() const { return calls_.load(); }

 private:
  std::function<bool(int)> fails_;
  std::chrono::milliseconds delay_;
  std::atomic<int> calls_{0};
};

// The tasks' outbox rows by attempt count (a claim counts an attempt).
std::map<int, int> AttemptCounts(store::TaskStore* store, const std::vector<int64_t>& ids) {
  std::map<int, int> counts;
  for (int64_t id : ids) ++counts[store->ListOutboxForTask(id).value().at(0).attempt_count];
  return counts;
}

TEST_F(ConsumerTest, FailedSendsInARowEndThePassAndLeaveTheOtherRowsUntried) {
  const std::vector<int64_t> ids = CreateTasks(10);
  ScriptedSendChannel down([](int) { return true; });
  OutboxPublisher publisher(store_.get(), &down, PublisherOptions{}, "pub");
  EXPECT_EQ(publisher.PublishDueOnce(), OutboxPublisher::kFailuresThatEndAPass);
  EXPECT_EQ(down.calls(), OutboxPublisher::kFailuresThatEndAPass);
  // Three rows back off; seven were never claimed and are due as they were.
  EXPECT_EQ(AttemptCounts(store_.get(), ids), (std::map<int, int>{{0, 7}, {1, 3}}));
  for (int64_t id : ids) {
    EXPECT_EQ(store_->ListOutboxForTask(id).value().at(0).status, store::OutboxStatus::kPending);
  }
  ScriptedSendChannel up([](int) { return false; });
  OutboxPublisher next(store_.get(), &up, PublisherOptions{}, "pub");
  EXPECT_EQ(next.PublishDueOnce(), 7);  // the untried rows, at once
}

TEST_F(ConsumerTest, AFlappingChannelStillGetsEveryDueRowTried) {
  const std::vector<int64_t> ids = CreateTasks(10);
  // Fails two in every three: never three in a row.
  ScriptedSendChannel flapping([](int call) { return call % 3 != 2; });
  OutboxPublisher publisher(store_.get(), &flapping, PublisherOptions{}, "pub");
  EXPECT_EQ(publisher.PublishDueOnce(), 10);
  int sent = 0;
  for (int64_t id : ids) {
    sent += store_->ListOutboxForTask(id).value().at(0).status == store::OutboxStatus::kSent;
  }
  EXPECT_EQ(sent, 3);  // the other 7 failed and back off
}

TEST_F(ConsumerTest, StopEndsAPassOfHangingSendsAfterTheSendInFlight) {
  CreateTasks(10);
  // Every send succeeds after 300 ms: ten would take 3 s.
  ScriptedSendChannel slow([](int) { return false; }, 300ms);
  PublisherOptions options;
  options.poll_interval_ms = 60000;
  OutboxPublisher publisher(store_.get(), &slow, options, "pub");
  publisher.Start();
  while (slow.calls() == 0) std::this_thread::sleep_for(1ms);
  const auto before = std::chrono::steady_clock::now();
  publisher.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
  EXPECT_LE(slow.calls(), 2);
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
  // Release the page only once the attempt has been told to stop, so the
  // next safe point is sure to see it.
  while (!consumer.ShutdownSignalled()) std::this_thread::sleep_for(1ms);
  release = true;
  stopper.join();
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_LE(t.next_retry_at, store_->DatabaseNowMs().value());  // due at once after restart
  EXPECT_EQ(StoredFiles(), 0u);
  EXPECT_TRUE(storage_->ListPartials().value().empty());
}

// The first page is a statement on a real SQLite datasource that only its
// timeout or a cancel ends (statement_source.h).
AttemptDeps WithEndlessStatement(AttemptDeps deps, const std::string& path, int timeout_ms,
                                 StatementProbe* probe) {
  deps.make_source =
      [path, timeout_ms, probe](
          const task::Task&, const registry::ExportDefinition&,
          const registry::RegistrySnapshot&) -> StatusOr<std::unique_ptr<source::RowSource>> {
    source::DatasourceTimeouts timeouts;
    timeouts.statement_timeout_ms = timeout_ms;
    return std::unique_ptr<source::RowSource>(
        new StatementSource(source::NewSqliteDatasource(path, timeouts), kEndlessSql, probe));
  };
  return deps;
}

void WaitFor(const std::atomic<bool>& flag) {
  while (!flag) std::this_thread::sleep_for(5ms);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST_F(ConsumerTest, AReplicaStatementPastItsTimeoutEndsTheAttemptForARetry) {
  StatementProbe probe;
  AttemptDeps deps = WithEndlessStatement(Deps(), (dir_ / "db.sqlite").string(), 500, &probe);
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  const auto start = std::chrono::steady_clock::now();
  PublishAndConsume(consumer);
  EXPECT_LT(SecondsSince(start), 3.0);
  EXPECT_EQ(probe.Outcome().code(), StatusCode::kDeadlineExceeded) << probe.Outcome().ToString();
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);  // transient: retried, as the retry rules say
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_EQ(t.failure_message, "The data source did not answer in time");
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, TheExecutionDeadlineCancelsTheReplicaStatementTheAttemptWaitsFor) {
  StatementProbe probe;
  AttemptDeps deps = WithEndlessStatement(Deps(), (dir_ / "db.sqlite").string(), 60000, &probe);
  deps.consumer.heartbeat_seconds = 1;
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  std::chrono::steady_clock::time_point passed;
  std::thread deadline([&] {
    WaitFor(probe.started);
    // The deadline passes while the statement runs: the watchdog's next
    // renewal sees it and the abort cancels the statement.
    passed = std::chrono::steady_clock::now();
    ASSERT_TRUE(
        db_->Exec("UPDATE export_task SET execution_deadline_at = 0 WHERE id = ?", {id}).ok());
  });
  PublishAndConsume(consumer);
  deadline.join();
  ASSERT_TRUE(probe.ended);
  EXPECT_LT(std::chrono::duration<double>(probe.EndedAt() - passed).count(), 2.5);
  EXPECT_EQ(probe.Outcome().code(), StatusCode::kDeadlineExceeded) << probe.Outcome().ToString();
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_EQ(t.failure_message, "The export took longer than the maximum time allowed");
}

TEST_F(ConsumerTest, ShutdownWithAHangingReplicaStatementEndsWithinTheGrace) {
  StatementProbe probe;
  AttemptDeps deps = WithEndlessStatement(Deps(), (dir_ / "db.sqlite").string(), 600000, &probe);
  deps.consumer.shutdown_grace_seconds = 2;
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  OutboxPublisher publisher(store_.get(), channel_.get(), PublisherOptions{}, "pub");
  publisher.PublishDueOnce();
  consumer.Start();
  WaitFor(probe.started);
  const auto start = std::chrono::steady_clock::now();
  consumer.Stop();
  const double took = SecondsSince(start);
  EXPECT_LE(took, 2.0);
  EXPECT_GE(took, 1.0);  // the attempt had most of the grace to finish
  EXPECT_EQ(probe.Outcome().message(), "interrupted by shutdown; will resume");
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);  // handed back, due at once
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_LE(t.next_retry_at, store_->DatabaseNowMs().value());
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
  deps.make_writer =
      [on_finish](task::FileFormat, ByteSink* sink,
                  const render::WriterOptions& o) -> StatusOr<std::unique_ptr<render::Writer>> {
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
    Reconciler reconciler(store_.get(), storage_.get(), ReconcilerOptions{});
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
                          " WHERE id = ?",
                          {id})
                    .ok());
  };
  Consumer consumer(channel_.get(), Deps());
  id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kRunning);  // untouched: it belongs to the other attempt
  EXPECT_EQ(t.lease.owner, "other");
  EXPECT_EQ(StoredFiles(), 0u);
  EXPECT_TRUE(storage_->ListPartials().value().empty());
}

TEST_F(ConsumerTest, CommitPastTheDeadlineFailsDeletesTheFileAndRetriesAsTimeout) {
  script_.pages = {Rows(1, 2)};
  int64_t id = 0;
  AttemptDeps deps = WithSlowFinish(Deps(), [&] {
    // The deadline passes between the last check and the commit statement.
    ASSERT_TRUE(
        db_->Exec("UPDATE export_task SET execution_deadline_at = 0 WHERE id = ?", {id}).ok());
  });
  Consumer consumer(channel_.get(), deps);
  id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_EQ(t.failure_message, "The export took longer than the maximum time allowed");
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
  // The last send failed after the skip above: its back-off is still in the row.
  const int64_t before = store_->DatabaseNowMs().value();
  ASSERT_EQ(publisher.PublishDueOnce(), 1) << "send 31";
  const int64_t after = store_->DatabaseNowMs().value();
  auto row = store_->ListOutboxForTask(id).value().at(0);
  EXPECT_EQ(row.status, store::OutboxStatus::kPending);
  EXPECT_EQ(row.attempt_count, 31);
  // Past the end of publisher.backoff-seconds the last step (15 min) repeats.
  const int64_t last_step_ms = int64_t{dispatch::PublisherOptions{}.backoff_seconds.back()} * 1000;
  EXPECT_GE(row.next_retry_at, before + last_step_ms);
  EXPECT_LE(row.next_retry_at, after + last_step_ms);
  EXPECT_EQ(Task(id).dispatch_version, 1);  // send failures never touch the task
}

// ---- claim misses (docs/task-lifecycle.md#claim-branches) --------------------------

TEST_F(ConsumerTest, EveryClaimMissBranchIsAcknowledgedAndChangesNothing) {
  Consumer consumer(channel_.get(), Deps());
  const int64_t id = CreateTask();
  const std::string event = store_->ListOutboxForTask(id).value().at(0).event_id;
  auto deliver = [&](int64_t task_id, int32_t version) {
    task::Command c;
    c.event_id = event;
    c.task_id = task_id;
    c.export_type = "TEST_LIST";
    c.dispatch_version = version;
    c.occurred_at = "2025-01-01T00:00:00.000Z";
    c.trace_id = "t";
    return consumer.Handle(Delivery{task::EncodeCommand(c), task::PropertiesOf(c), 1, "m"});
  };
  auto set = [&](const std::string& assignments) {
    ASSERT_TRUE(db_->Exec("UPDATE export_task SET " + assignments + " WHERE id = ?", {id}).ok());
  };
  const int64_t now = store_->DatabaseNowMs().value();
  struct Branch {
    std::string name;
    std::string state;  // assignments that put the task in the branch
    int64_t task_id;
    int32_t version;
  };
  const std::vector<Branch> branches = {
      {"TASK_MISSING", "status = 'PENDING'", id + 1, 1},
      {"NEWER_VERSION", "dispatch_version = 2", id, 1},
      {"OLDER_VERSION", "dispatch_version = 1", id, 2},
      {"RUNNING_LEASE_LIVE",
       "status = 'RUNNING', lease_owner = 'other', lease_until = " + std::to_string(now + 300000),
       id, 1},
      {"RUNNING_LEASE_EXPIRED",
       "status = 'RUNNING', lease_owner = 'other', lease_until = " + std::to_string(now - 1000), id,
       1},
      {"PENDING_BACKOFF",
       "status = 'PENDING', lease_owner = NULL, lease_until = NULL, next_retry_at = " +
           std::to_string(now + 900000),
       id, 1},
      {"FINISHED", "status = 'SUCCEEDED', next_retry_at = 0", id, 1},
  };
  for (const Branch& b : branches) {
    set(b.state);
    const task::Task before = Task(id);
    EXPECT_EQ(deliver(b.task_id, b.version), DeliveryOutcome::kAck) << b.name;
    const task::Task after = Task(id);
    EXPECT_EQ(after.status, before.status) << b.name;
    EXPECT_EQ(after.dispatch_version, before.dispatch_version) << b.name;
    EXPECT_EQ(after.attempt_count, before.attempt_count) << b.name;
    EXPECT_EQ(after.lease.owner, before.lease.owner) << b.name;
    EXPECT_EQ(store_->ListOutboxForTask(id).value().size(), 1u) << b.name << ": nothing re-sent";
  }
  EXPECT_EQ(script_.sources_made, 0);
  EXPECT_FALSE(channel_->ConsumeOne(20ms, [](const Delivery&) { return DeliveryOutcome::kAck; }))
      << "a claim miss never puts anything back on the channel";
}

// ---- dead letters (docs/task-lifecycle.md#dead-letters-and-quarantine) ------------

TEST_F(ConsumerTest, FailedQuarantineKeepsTheDeadLetterAndRetriesIt) {
  FaultyTaskStore faulty(store_.get());
  faulty.failing_quarantines = 2;
  const int64_t id = CreateTask();
  const auto outbox = store_->ListOutboxForTask(id).value().at(0);
  task::CommandProperties props = {{"taskId", std::to_string(id)},
                                   {"dispatchVersion", "1"},
                                   {"eventId", outbox.event_id},
                                   {"schemaVersion", "1"}};
  auto channel = NewEmbeddedCommandChannel(1);
  ASSERT_TRUE(channel->Publish("{\"schemaVersion\": ", props).ok());
  ASSERT_TRUE(channel->ConsumeOne(20ms, [](const Delivery&) { return DeliveryOutcome::kReject; }));
  DlqHandler dlq(&faulty, channel.get());
  std::vector<DeliveryOutcome> outcomes;
  while (channel->ConsumeDeadLetter(20ms, [&](const Delivery& d) {
    outcomes.push_back(dlq.Handle(d));
    return outcomes.back();
  })) {
  }
  EXPECT_EQ(outcomes,
            (std::vector<DeliveryOutcome>{DeliveryOutcome::kReject, DeliveryOutcome::kReject,
                                          DeliveryOutcome::kAck}));
  EXPECT_EQ(Task(id).status, TaskState::kFailed);
  EXPECT_EQ(store_->ListOutboxForTask(id).value().at(0).status, store::OutboxStatus::kQuarantined);
}

TEST_F(ConsumerTest, DlqWorkerRetriesAFailedQuarantineUntilItSucceeds) {
  FaultyTaskStore faulty(store_.get());
  faulty.failing_quarantines = 1;
  const int64_t id = CreateTask();
  const auto outbox = store_->ListOutboxForTask(id).value().at(0);
  auto channel = NewEmbeddedCommandChannel(1);
  ASSERT_TRUE(channel
                  ->Publish("{", {{"taskId", std::to_string(id)},
                                  {"dispatchVersion", "1"},
                                  {"eventId", outbox.event_id}})
                  .ok());
  ASSERT_TRUE(channel->ConsumeOne(20ms, [](const Delivery&) { return DeliveryOutcome::kReject; }));
  DeadLetterCounter received;
  DlqHandler dlq(&faulty, channel.get(), &received);
  dlq.Start();
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (Task(id).status != TaskState::kFailed && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(10ms);
  }
  dlq.Stop();
  EXPECT_EQ(Task(id).status, TaskState::kFailed);
  EXPECT_EQ(received.count.load(), 2) << "handed over twice: the failed try and the retry";
}

// ---- lease renewal (docs/task-lifecycle.md#lease-and-heartbeat) --------------------

TEST(LeaseWatchdogMargins, DefaultsLeaveAMinuteOfTheLease) {
  EXPECT_EQ(LeaseWatchdog::SafetyMargin(300), 60s);
  EXPECT_EQ(LeaseWatchdog::SafetyMargin(2), 1s);
  EXPECT_EQ(LeaseWatchdog::RetryInterval(60), 5s);
  EXPECT_EQ(LeaseWatchdog::RetryInterval(1), 1s);
}

TEST_F(ConsumerTest, OneFailedLeaseRenewalDoesNotStopTheExport) {
  FaultyTaskStore faulty(store_.get());
  faulty.failing_renewals = 1;  // the renewal before the first page
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  AttemptDeps deps = Deps();
  deps.store = &faulty;
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kSucceeded) << t.failure_message.value_or("");
  EXPECT_EQ(t.dispatch_version, 1);
  EXPECT_EQ(faulty.failing_renewals.load(), 0) << "the failing renewal really happened";
}

TEST_F(ConsumerTest, WatchdogRetriesAFailedRenewalInsideTheLease) {
  FaultyTaskStore faulty(store_.get());
  script_.pages = {Rows(1, 2)};
  script_.hook_at[0] = [&] {
    faulty.failing_renewals = 1;  // the watchdog's next renewal fails once
    const int calls = faulty.renew_calls.load();
    // A slow page: wait for the failed renewal and its retry.
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (faulty.renew_calls.load() < calls + 2 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(5ms);
    }
    EXPECT_GE(faulty.renew_calls.load(), calls + 2);
  };
  AttemptDeps deps = Deps();
  deps.store = &faulty;
  deps.consumer.lease_seconds = 5;
  deps.consumer.heartbeat_seconds = 1;
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kSucceeded) << t.failure_message.value_or("");
  EXPECT_EQ(t.dispatch_version, 1);
}

TEST_F(ConsumerTest, WatchdogRenewalErrorsAbortTheAttemptAtTheSafetyMargin) {
  FaultyTaskStore faulty(store_.get());
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  int failed_renewals = 0;
  std::chrono::steady_clock::duration gave_up_after{};
  script_.hook_at[0] = [&] {
    // The database stops answering renewals while a slow page is read. Wait
    // until the watchdog has given up: no renewal for longer than its retry
    // interval.
    const auto start = std::chrono::steady_clock::now();
    const int calls_before = faulty.renew_calls.load();
    faulty.failing_renewals = -1;
    int last = calls_before;
    auto last_change = start;
    while (std::chrono::steady_clock::now() - last_change < 1500ms &&
           std::chrono::steady_clock::now() - start < 10s) {
      std::this_thread::sleep_for(10ms);
      if (faulty.renew_calls.load() != last) {
        last = faulty.renew_calls.load();
        last_change = std::chrono::steady_clock::now();
      }
    }
    failed_renewals = last - calls_before;
    gave_up_after = last_change - start;
  };
  AttemptDeps deps = Deps();
  deps.store = &faulty;
  deps.consumer.lease_seconds = 5;  // safety margin 1 s, retries every 1 s
  deps.consumer.heartbeat_seconds = 1;
  Consumer consumer(channel_.get(), deps);
  const int64_t id = CreateTask();
  PublishAndConsume(consumer);
  EXPECT_GE(failed_renewals, 2) << "a failed renewal is retried before giving up";
  EXPECT_LT(gave_up_after, 4s) << "gave up before the lease (5 s) ran out";
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kPending) << "handed back as a transient failure";
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_EQ(t.failure_message, "The export center was temporarily unavailable");
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, AttemptEndNamesTheFinalTaskStatus) {
  std::vector<AttemptEnd> ends;
  AttemptDeps deps = Deps();
  EndRecorder recorder(&ends);
  deps.observer = &recorder;
  Consumer consumer(channel_.get(), deps);
  script_.pages = {Rows(1, 2)};
  script_.fail_at[0] = InvalidArgument("the contract version changed");
  script_.terminal_state = TaskState::kStale;
  const int64_t stale = CreateTask("u1");
  PublishAndConsume(consumer);
  EXPECT_EQ(Task(stale).status, TaskState::kStale);
  script_.terminal_state = TaskState::kInconsistent;
  const int64_t inconsistent = CreateTask("u2");
  PublishAndConsume(consumer);
  EXPECT_EQ(Task(inconsistent).status, TaskState::kInconsistent);
  script_.terminal_state.reset();
  script_.fail_at[0] = Unavailable("HTTP 503");
  const int64_t retried = CreateTask("u3");
  PublishAndConsume(consumer);
  EXPECT_EQ(Task(retried).status, TaskState::kPending);
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ToString(ends[0]), "STALE");
  EXPECT_EQ(ToString(ends[1]), "INCONSISTENT");
  EXPECT_EQ(ends[2], AttemptEnd::kRetried);
  EXPECT_TRUE(IsFinal(ends[0]));
  EXPECT_TRUE(IsFinal(ends[1]));
  EXPECT_FALSE(IsFinal(ends[2])) << "a retry is not a completed task";
  EXPECT_FALSE(IsFinal(AttemptEnd::kLost));
}

// ---- cancellation on every path (docs/task-lifecycle.md#cancellation) ---------------

TEST_F(ConsumerTest, CancelRequestedBeforeATransientFailureEndsCancelledNotPending) {
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  int64_t id = 0;
  script_.hook_at[1] = [&] { ASSERT_TRUE(store_->RequestCancel(id).ok()); };
  script_.fail_at[1] = Unavailable("provider answered HTTP 503");
  std::vector<AttemptEnd> ends;
  AttemptDeps deps = Deps();
  EndRecorder recorder(&ends);
  deps.observer = &recorder;
  Consumer consumer(channel_.get(), deps);
  id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kCancelled);
  EXPECT_EQ(t.dispatch_version, 1) << "not handed back for a retry";
  EXPECT_EQ(store_->ListOutboxForTask(id).value().size(), 1u) << "no command for a retry";
  EXPECT_EQ(ends, std::vector<AttemptEnd>{AttemptEnd::kCancelled});
  EXPECT_EQ(StoredFiles(), 0u);
}

TEST_F(ConsumerTest, CancelRequestedDuringTheFinalWriteIsHonouredByTheCommit) {
  script_.pages = {Rows(1, 2)};
  int64_t id = 0;
  AttemptDeps deps = WithSlowFinish(Deps(), [&] {
    // After the last page's cancel check, before the commit statement.
    ASSERT_TRUE(store_->RequestCancel(id).ok());
  });
  Consumer consumer(channel_.get(), deps);
  id = CreateTask();
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kCancelled);
  EXPECT_FALSE(t.object_key.has_value());
  EXPECT_EQ(StoredFiles(), 0u) << "the file of a cancelled export is deleted";
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

TEST(MakeFileName, DropsInvalidUtf8) {
  task::Task t;
  t.id = 42;
  t.task_name = "bad\xFF\xC0\xAF\xED\xA0\x80name\xE5\xAE";  // stray, overlong '/', surrogate, cut
  t.export_type = "CUSTOMER_LIST";
  registry::ExportDefinition def;
  def.file_name_pattern = "{taskName}";
  EXPECT_EQ(MakeFileName(def, t, "csv"), "badname.csv");
  t.task_name = "\xFF\xFE";
  EXPECT_EQ(MakeFileName(def, t, "csv"), "export.csv");
}

// ---- password-protected files (docs/configuration.md#password-protected-files-file-password)
// ---------

const std::string kFileKeyA = "consumer-test-key-encryption-key-of-32+-bytes-A";
const std::string kFileKeyB = "consumer-test-key-encryption-key-of-32+-bytes-B";
const std::string kMaterial = "derived file key material \x01\x02\xff of some length";

class EncryptedAttemptTest : public ConsumerTest {
 protected:
  int64_t CreateEncrypted(const FileKeyRing& ring) {
    store::NewTask t;
    t.tenant_id = "1";
    t.requested_by = "u1";
    t.export_type = "TEST_LIST";
    t.task_name = "加密导出";
    t.format = task::FileFormat::kCsv;
    t.parameters_json = "{}";
    t.params_hash = "h-enc";
    auto wrapped = ring.Wrap(kMaterial);
    EXPECT_TRUE(wrapped.ok()) << wrapped.status().ToString();
    t.file_key = *wrapped;
    auto created = store_->CreateTask(t, {});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created->task.id;
  }

  // Deps whose writer records the key material each attempt hands it.
  AttemptDeps RecordingDeps(std::shared_ptr<const FileKeyRing> ring) {
    AttemptDeps deps = Deps();
    deps.file_keys = std::move(ring);
    deps.consumer.retry_backoff_seconds = {0};
    deps.make_writer =
        [this](task::FileFormat, ByteSink* sink,
               const render::WriterOptions& o) -> StatusOr<std::unique_ptr<render::Writer>> {
      materials_.push_back(o.file_key_material ? *o.file_key_material : std::string("(plain)"));
      return render::NewCsvWriter(sink, o);
    };
    return deps;
  }

  static std::shared_ptr<const FileKeyRing> Ring(const std::string& current,
                                                 std::vector<std::string> previous = {}) {
    return FileKeyRing::Create(current, previous).value();
  }

  std::vector<std::string> materials_;
};

// Every attempt — the first, and the retry after a transient failure —
// writes with the same material, so the same password opens the file; a key
// rotated in between still unwraps it, and the task's end erases it.
TEST_F(EncryptedAttemptTest, EveryAttemptWritesWithTheSameUnwrappedKeyMaterial) {
  const int64_t id = CreateEncrypted(*Ring(kFileKeyA));
  script_.pages = {Rows(1, 2), Rows(3, 2)};
  script_.fail_at[1] = Unavailable("provider answered HTTP 503");
  {
    Consumer consumer(channel_.get(), RecordingDeps(Ring(kFileKeyA)));
    PublishAndConsume(consumer);
  }
  ASSERT_EQ(Task(id).status, TaskState::kPending);
  ASSERT_TRUE(Task(id).file_key.has_value()) << "kept for the retry";
  script_.fail_at.clear();
  {
    // Rotated since the create: B wraps, A only unwraps.
    Consumer consumer(channel_.get(), RecordingDeps(Ring(kFileKeyB, {kFileKeyA})));
    PublishAndConsume(consumer);
  }
  task::Task t = Task(id);
  ASSERT_EQ(t.status, TaskState::kSucceeded) << t.failure_message.value_or("");
  EXPECT_EQ(materials_, (std::vector<std::string>{kMaterial, kMaterial}));
  EXPECT_TRUE(t.encrypted);
  EXPECT_FALSE(t.file_key.has_value()) << "erased when the task ended";
}

// A key rotated away (or none configured) is a clear permanent failure before
// any row is read: never a plain file instead, never a retry that cannot work.
TEST_F(EncryptedAttemptTest, AKeyRotatedAwayFailsPermanentlyWithoutReadingOrWriting) {
  const int64_t id = CreateEncrypted(*Ring(kFileKeyA));
  script_.pages = {Rows(1, 2)};
  LogCapture log;
  Consumer consumer(channel_.get(), RecordingDeps(Ring(kFileKeyB)));
  PublishAndConsume(consumer);
  task::Task t = Task(id);
  EXPECT_EQ(t.status, TaskState::kFailed);
  EXPECT_EQ(t.failure_code, "FILE_KEY_UNAVAILABLE");
  EXPECT_NE(t.failure_message.value_or("").find("export again with a new password"),
            std::string::npos)
      << t.failure_message.value_or("");
  EXPECT_NE(t.failure_detail.value_or("").find(FileKeyRing::KeyIdOf(kFileKeyA)), std::string::npos)
      << "the operators see which key is missing";
  EXPECT_EQ(t.dispatch_version, 1) << "permanent: not retried";
  EXPECT_EQ(script_.sources_made, 0);
  EXPECT_TRUE(materials_.empty());
  EXPECT_EQ(StoredFiles(), 0u);
  EXPECT_FALSE(t.file_key.has_value());
  EXPECT_EQ(log.Line({kFileKeyA}), "");

  const int64_t without_ring = CreateEncrypted(*Ring(kFileKeyA));
  Consumer no_keys(channel_.get(), RecordingDeps(nullptr));
  PublishAndConsume(no_keys);
  EXPECT_EQ(Task(without_ring).failure_code, "FILE_KEY_UNAVAILABLE");
  EXPECT_TRUE(materials_.empty());
}

}  // namespace
}  // namespace export_center::dispatch
