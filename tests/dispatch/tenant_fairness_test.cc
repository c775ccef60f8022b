// Tenant fairness end to end inside one process (docs/dispatch.md#tenant-fairness):
// a real SQLite store, real local storage, the real CSV writer, the real
// publisher, consumer and reconciler, on the embedded channel or on a real
// RocketMQ broker (tests/support); only the row source is scripted, and each
// export takes a fixed time.
//
// Tenant A queues 40 exports, then tenant B queues 2: B's two must start
// before A's 10th finishes, and every one of A's must still finish exactly
// once. Without fairness B would wait behind about 36 of A's commands.
// A tenant alone runs on every slot (the limit binds only while another waits).

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/consumer.h"
#include "dispatch/embedded_command_channel.h"
#include "dispatch/outbox_publisher.h"
#include "dispatch/reconciler.h"
#include "render/csv_writer.h"
#include "storage/local_export_storage.h"
#include "store/sqlite/sqlite_task_store.h"

#ifdef EXPORT_CENTER_WITH_ROCKETMQ
#include "dispatch/rocketmq/rocketmq_command_channel.h"
#include "dispatch/rocketmq/rocketmq_setup.h"
#include "tests/support/rocketmq_server.h"
#endif

namespace export_center::dispatch {

using attempt::AttemptDeps;
using attempt::AttemptEnd;
namespace {

using namespace std::chrono_literals;

constexpr int kTenantATasks = 40;
constexpr int kTenantBTasks = 2;
// Long enough that A's 10th export cannot end before B's tasks are even created
// (creating 42 tasks takes well under a second even on a loaded machine).
constexpr auto kExportTime = 250ms;

// What happened, in one order: starts (source made for a claimed attempt)
// and ends (the attempt's end callback).
struct Event {
  enum Kind { kStart, kEnd } kind;
  std::string tenant;
  int64_t task_id;
  AttemptEnd end = AttemptEnd::kSucceeded;
};

class EventLog {
 public:
  void Add(Event e) {
    std::lock_guard lock(mu_);
    events_.push_back(std::move(e));
  }
  std::vector<Event> Snapshot() {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  std::mutex mu_;
  std::vector<Event> events_;
};

// One page of one row, delivered after kExportTime: an export that takes a while.
class SlowSource : public source::RowSource {
 public:
  const std::vector<task::Column>& columns() const override { return columns_; }
  StatusOr<source::Page> NextPage() override {
    std::this_thread::sleep_for(kExportTime);
    source::Page page;
    page.rows = {{int64_t{1}}};
    page.has_more = false;
    return page;
  }

 private:
  std::vector<task::Column> columns_ = {{"id", "编号", task::ColumnType::kInteger, 10, 0, ""}};
};

// The channel under test: embedded, or a fresh set of topics on a real broker.
std::unique_ptr<CommandChannel> OpenChannel(const std::string& kind) {
  if (kind == "embedded") return NewEmbeddedCommandChannel(3);
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
  static std::unique_ptr<testing::RocketMqServer> server;
  if (server == nullptr) {
    auto started = testing::RocketMqServer::Start();
    // A real-server test that cannot start its server fails: never a skip.
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return nullptr;
    server = std::move(*started);
  }
  ChannelOptions options;
  options.kind = "rocketmq";
  options.rocketmq.namesrv_addr = server->namesrv_addr();
  options.rocketmq.topic_prefix = "fair-" + std::to_string(getpid()) + "-";
  Status init = InitRocketMq(
      options, [](const std::string&) {}, 60s);
  EXPECT_TRUE(init.ok()) << init.ToString();
  if (!init.ok()) return nullptr;
  auto channel = NewRocketMqCommandChannel(options);
  EXPECT_TRUE(channel.ok()) << channel.status().ToString();
  return channel.ok() ? std::move(*channel) : nullptr;
#else
  ADD_FAILURE() << "built without RocketMQ";
  return nullptr;
#endif
}

class TenantFairnessTest : public ::testing::TestWithParam<std::string>,
                           public attempt::AttemptObserver {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ec-fairness-" + std::to_string(::getpid()) + "-" + GetParam());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store_ = std::move(store::OpenSqliteTaskStore((dir_ / "db.sqlite").string()).value());
    ASSERT_TRUE(store_->Migrate().ok());
    storage_ = std::move(storage::NewLocalExportStorage((dir_ / "files").string()).value());
    registry::ExportDefinition def;
    def.name = "TEST_LIST";
    def.title = "测试";
    def.service = "svc";
    def.max_rows = 1000;
    registry::RegistrySnapshot snapshot;
    snapshot.definitions[def.name] = def;
    registry_ = std::make_unique<registry::Registry>(snapshot);
    channel_ = OpenChannel(GetParam());
    ASSERT_NE(channel_, nullptr);
  }
  void TearDown() override {
    if (channel_ != nullptr) channel_->Close();
    std::filesystem::remove_all(dir_);
  }

  AttemptDeps Deps() {
    AttemptDeps deps;
    deps.store = store_.get();
    deps.storage = storage_.get();
    deps.registry = registry_.get();
    deps.make_source =
        [this](const task::Task& t, const registry::ExportDefinition&,
               const registry::RegistrySnapshot&) -> StatusOr<std::unique_ptr<source::RowSource>> {
      log_.Add({Event::kStart, t.tenant_id, t.id});
      return std::unique_ptr<source::RowSource>(new SlowSource());
    };
    deps.make_writer = [](task::FileFormat, ByteSink* sink, const render::WriterOptions& o)
        -> StatusOr<std::unique_ptr<render::Writer>> { return render::NewCsvWriter(sink, o); };
    // Four slots and the default limit: half of them, 2 per tenant.
    deps.consumer.concurrency = 4;
    deps.consumer.heartbeat_seconds = 1;
    deps.consumer.tenant_handback_ms = 200;
    deps.limits.max_file_bytes = 1024 * 1024;
    deps.instance = "fair-instance";
    deps.observer = this;
    return deps;
  }

  // attempt::AttemptObserver
  void FirstStarted(const task::Task& t, double wait_seconds) override {
    std::lock_guard lock(mu_);
    ++first_starts_[t.id];
    EXPECT_GE(wait_seconds, 0.0);
    double& most = most_wait_[t.tenant_id];
    most = std::max(most, wait_seconds);
  }
  void AttemptEnded(const task::Task& t, AttemptEnd end, double) override {
    log_.Add({Event::kEnd, t.tenant_id, t.id, end});
  }

  int64_t Create(const std::string& tenant, int n) {
    store::NewTask t;
    t.tenant_id = tenant;
    t.requested_by = tenant + "-user";
    t.export_type = "TEST_LIST";
    t.task_name = "导出";
    t.format = task::FileFormat::kCsv;
    t.parameters_json = "{\"n\":" + std::to_string(n) + "}";
    t.params_hash = tenant + std::to_string(n);
    // The create limits are the API's business, not the scheduler's.
    auto created = store_->CreateTask(t, store::CreateLimits{60, 1000, 1000});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->task.id : 0;
  }

  static store::TaskStore::ListQuery TenantQuery(const std::string& tenant, task::TaskState state) {
    store::TaskStore::ListQuery query;
    query.tenant_id = tenant;
    query.status = state;
    query.size = 100;
    return query;
  }

  int CountInState(task::TaskState state) {
    auto rows = store_->ListTasks(TenantQuery("A", state));
    auto rows_b = store_->ListTasks(TenantQuery("B", state));
    return static_cast<int>(rows.value().total + rows_b.value().total);
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<storage::ExportStorage> storage_;
  std::unique_ptr<registry::Registry> registry_;
  std::unique_ptr<CommandChannel> channel_;
  EventLog log_;
  std::mutex mu_;
  std::map<int64_t, int> first_starts_;
  std::map<std::string, double> most_wait_;  // tenant → longest creation-to-RUNNING
};

TEST_P(TenantFairnessTest, ASecondTenantStartsBeforeTheFirstTenantsTenthExportEnds) {
  PublisherOptions publishing;
  publishing.poll_interval_ms = 100;
  OutboxPublisher publisher(store_.get(), channel_.get(), publishing, "pub");
  ReconcilerOptions reconciling;
  reconciling.interval_seconds = 1;
  // The reconciler's re-dispatch wakes the publisher, as app/ wires it.
  class WakePublisher : public ReconcilerObserver {
   public:
    explicit WakePublisher(OutboxPublisher* publisher) : publisher_(publisher) {}
    void Redispatched() override { publisher_->Wake(); }

   private:
    OutboxPublisher* publisher_;
  } wake_publisher(&publisher);
  Reconciler reconciler(store_.get(), storage_.get(), reconciling, &wake_publisher);
  Consumer consumer(channel_.get(), Deps());
  consumer.Start();
  publisher.Start();
  reconciler.Start();

  std::vector<int64_t> a_ids;
  for (int i = 0; i < kTenantATasks; ++i) {
    a_ids.push_back(Create("A", i));
    publisher.Wake();
  }
  for (int i = 0; i < kTenantBTasks; ++i) {
    Create("B", i);
    publisher.Wake();
  }

  // A runs at most the four slots, and only while B has nothing waiting more
  // than its limit (2): the limit is work-conserving.
  int most_running_a = 0;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (CountInState(task::TaskState::kSucceeded) < kTenantATasks + kTenantBTasks &&
         std::chrono::steady_clock::now() < deadline) {
    auto running = store_->ListTasks(TenantQuery("A", task::TaskState::kRunning));
    ASSERT_TRUE(running.ok()) << running.status().ToString();
    most_running_a = std::max(most_running_a, static_cast<int>(running->total));
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_LE(most_running_a, 4);
  EXPECT_GE(most_running_a, 1);
  consumer.Stop();
  publisher.Stop();
  reconciler.Stop();
  ASSERT_EQ(CountInState(task::TaskState::kSucceeded), kTenantATasks + kTenantBTasks);

  // B's both start before A's 10th end.
  const std::vector<Event> events = log_.Snapshot();
  int a_ends = 0;
  int b_starts = 0;
  int b_starts_before_a_tenth_end = -1;
  for (const Event& e : events) {
    if (e.kind == Event::kStart && e.tenant == "B") ++b_starts;
    if (e.kind == Event::kEnd && e.tenant == "A" && ++a_ends == 10) {
      b_starts_before_a_tenth_end = b_starts;
    }
  }
  EXPECT_EQ(b_starts_before_a_tenth_end, kTenantBTasks);

  // Every export of A ran exactly once, as its first attempt and version.
  std::map<int64_t, int> starts;
  for (const Event& e : events) {
    if (e.kind == Event::kStart) ++starts[e.task_id];
  }
  for (int64_t id : a_ids) {
    EXPECT_EQ(starts[id], 1) << "task " << id;
    task::Task t = store_->GetTask(id).value();
    EXPECT_EQ(t.attempt_count, 1) << "task " << id;
    EXPECT_EQ(t.dispatch_version, 1) << "task " << id;
    std::lock_guard lock(mu_);
    EXPECT_EQ(first_starts_[id], 1) << "task " << id;
  }
  EXPECT_EQ(storage_->List().value().size(), static_cast<size_t>(kTenantATasks + kTenantBTasks));
  std::lock_guard lock(mu_);
  std::printf(
      "[ figures  ] %s: longest wait, creation to RUNNING: tenant A %.2f s, tenant B %.2f s\n",
      GetParam().c_str(), most_wait_["A"], most_wait_["B"]);
}

// A tenant alone on the instance uses every slot: 10 exports run 4 at a time
// (the default limit, 2, binds only while another tenant waits), none is
// handed back, and the batch takes 3 export times, not the 5 of 2 at a time.
TEST_P(TenantFairnessTest, ATenantAloneRunsOnEverySlot) {
  constexpr int kTasks = 10;
  PublisherOptions publishing;
  publishing.poll_interval_ms = 100;
  OutboxPublisher publisher(store_.get(), channel_.get(), publishing, "pub");
  Consumer consumer(channel_.get(), Deps());
  consumer.Start();
  publisher.Start();
  const auto started = std::chrono::steady_clock::now();
  std::vector<int64_t> ids;
  for (int i = 0; i < kTasks; ++i) {
    ids.push_back(Create("A", i));
    publisher.Wake();
  }
  int most_running = 0;
  const auto deadline = started + 60s;
  while (CountInState(task::TaskState::kSucceeded) < kTasks &&
         std::chrono::steady_clock::now() < deadline) {
    auto running = store_->ListTasks(TenantQuery("A", task::TaskState::kRunning));
    ASSERT_TRUE(running.ok()) << running.status().ToString();
    most_running = std::max(most_running, static_cast<int>(running->total));
    std::this_thread::sleep_for(10ms);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  consumer.Stop();
  publisher.Stop();
  ASSERT_EQ(CountInState(task::TaskState::kSucceeded), kTasks);
  EXPECT_EQ(most_running, 4);
  // A hand-back would have re-sent the command: each ran once, first attempt,
  // and never waited out a hand-back back-off.
  for (int64_t id : ids) {
    task::Task t = store_->GetTask(id).value();
    EXPECT_EQ(t.attempt_count, 1) << "task " << id;
    EXPECT_EQ(t.dispatch_version, 1) << "task " << id;
  }
  std::printf(
      "[ figures  ] %s: 10 exports of one tenant, %.0f ms each, 4 slots: %.2f s"
      " (4 at a time needs >= %.2f s, 2 at a time >= %.2f s)\n",
      GetParam().c_str(), std::chrono::duration<double, std::milli>(kExportTime).count(), seconds,
      3 * std::chrono::duration<double>(kExportTime).count(),
      5 * std::chrono::duration<double>(kExportTime).count());
}

INSTANTIATE_TEST_SUITE_P(Channels, TenantFairnessTest,
                         ::testing::Values(std::string("embedded"), std::string("rocketmq")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace export_center::dispatch
