// channel_bench: the command channel through the embedded queue and through a
// real RocketMQ broker, in one run (docs/dispatch.md#the-command-channel).
//
// For each channel:
//   1. throughput: N commands published by one thread (as the one outbox
//      publisher of a process does) while 4 consumer threads take and
//      acknowledge them: commands/s from the first send to the last ack, and
//      the publish→handler latency p50/p99;
//   2. create→RUNNING: tasks created one by one in a real SQLite store (task +
//      outbox row in one transaction), sent by the real OutboxPublisher (woken
//      by the commit, as the API does), claimed by the real Consumer (4
//      threads): the time from the start of CreateTask to the claim, p50/p99.
//      The export itself is an empty page, so nothing waits behind it.
//
// RocketMQ: --namesrv HOST:PORT uses a running cluster (its topics are made
// with a fresh prefix, as `export-center rocketmq init` would); without it the
// bench starts a throwaway NameServer + broker with scripts/test-rocketmq.sh
// and stops it at the end. Goal: create→RUNNING p99 <= 200 ms on RocketMQ.
//
// usage: channel_bench [--commands N] [--tasks N] [--namesrv ADDR]
//                      [--only embedded|rocketmq]
// Not run by the tests.

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/command_channel.h"
#include "dispatch/consumer.h"
#include "dispatch/embedded_command_channel.h"
#include "dispatch/outbox_publisher.h"
#include "render/csv_writer.h"
#include "storage/local_export_storage.h"
#include "store/sqlite/sqlite_task_store.h"
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
#include "dispatch/rocketmq/rocketmq_command_channel.h"
#include "dispatch/rocketmq/rocketmq_setup.h"
#endif

namespace {

namespace ec = export_center;
namespace dispatch = export_center::dispatch;
namespace attempt = export_center::attempt;
using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "channel_bench: %s\n", what.c_str());
  std::exit(1);
}

template <class T>
T Must(ec::StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(std::string(what) + ": " + v.status().ToString());
  return std::move(v).value();
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Opens a channel on the same queues each call (a process of the deployment).
using ChannelFactory = std::function<std::unique_ptr<dispatch::CommandChannel>()>;

struct Figures {
  double commands_per_second = 0;
  double publish_per_second = 0;
  double delivery_p50_ms = 0, delivery_p99_ms = 0;
  double create_p50_ms = 0, create_p99_ms = 0, create_max_ms = 0;
  int tasks = 0;
};

// ---- 1. throughput -----------------------------------------------------------

void MeasureThroughput(const ChannelFactory& open, int commands, Figures* out) {
  auto channel = open();
  // Warm-up, not timed: a broker consumer first has to get its queues.
  if (!channel->Publish("warm-up", {{"taskId", "0"}}).ok()) Die("warm-up publish failed");
  bool warm = false;
  for (int i = 0; i < 600 && !warm; ++i) {
    warm = channel->ConsumeOne(std::chrono::milliseconds(100), [](const dispatch::Delivery&) {
      return dispatch::DeliveryOutcome::kAck;
    });
  }
  if (!warm) Die("the warm-up command never arrived");
  std::mutex mu;
  std::map<int64_t, Clock::time_point> sent;
  std::vector<double> latencies;
  std::atomic<int> handled{0};
  const auto start = Clock::now();
  std::vector<std::thread> consumers;
  for (int t = 0; t < 4; ++t) {
    consumers.emplace_back([&] {
      while (handled.load() < commands && Clock::now() - start < std::chrono::minutes(5)) {
        channel->ConsumeOne(std::chrono::milliseconds(100), [&](const dispatch::Delivery& d) {
          const auto now = Clock::now();
          const int64_t id = std::stoll(d.properties.at("taskId"));
          std::lock_guard lock(mu);
          latencies.push_back(Ms(now - sent[id]));
          ++handled;
          return dispatch::DeliveryOutcome::kAck;
        });
      }
    });
  }
  for (int i = 0; i < commands; ++i) {
    ec::task::Command c;
    c.event_id = "bench-" + std::to_string(i);
    c.task_id = 1000000 + i;
    c.export_type = "BENCH";
    {
      std::lock_guard lock(mu);
      sent[c.task_id] = Clock::now();
    }
    ec::Status s = channel->Publish(ec::task::EncodeCommand(c), ec::task::PropertiesOf(c));
    if (!s.ok()) Die("publish: " + s.ToString());
  }
  const auto published = Clock::now();
  for (auto& t : consumers) t.join();
  const auto end = Clock::now();
  if (handled.load() != commands) {
    Die("only " + std::to_string(handled.load()) + " of " + std::to_string(commands) +
        " commands arrived");
  }
  channel->Close();
  out->commands_per_second = commands / std::chrono::duration<double>(end - start).count();
  out->publish_per_second = commands / std::chrono::duration<double>(published - start).count();
  out->delivery_p50_ms = Percentile(latencies, 0.50);
  out->delivery_p99_ms = Percentile(latencies, 0.99);
}

// ---- 2. create -> RUNNING ------------------------------------------------------

// One empty page: the attempt ends at once, so a consumer is never busy long.
class EmptySource : public ec::source::RowSource {
 public:
  const std::vector<ec::task::Column>& columns() const override { return columns_; }
  ec::StatusOr<ec::source::Page> NextPage() override { return ec::source::Page{}; }

 private:
  std::vector<ec::task::Column> columns_ = {{"id", "id", ec::task::ColumnType::kInteger, 0, 0, ""}};
};

void MeasureCreateToRunning(const ChannelFactory& open, int tasks, const std::string& dir,
                            Figures* out) {
  std::filesystem::create_directories(dir);
  auto store = Must(ec::store::OpenSqliteTaskStore(dir + "/bench.db"), "open sqlite");
  if (auto s = store->Migrate(); !s.ok()) Die("migrate: " + s.ToString());
  auto storage = Must(ec::storage::NewLocalExportStorage(dir + "/files"), "open storage");
  ec::registry::ExportDefinition def;
  def.name = "BENCH_LIST";
  def.title = "bench";
  def.service = "bench";
  ec::registry::RegistrySnapshot snapshot;
  snapshot.definitions[def.name] = def;
  ec::registry::Registry registry(snapshot);

  std::mutex mu;
  std::map<int64_t, Clock::time_point> created_at;
  std::vector<double> latencies;
  std::atomic<int> running{0};
  std::atomic<bool> warmed_up{false};
  auto channel = open();
  attempt::AttemptDeps deps;
  deps.store = store.get();
  deps.storage = storage.get();
  deps.registry = &registry;
  deps.instance = "bench";
  deps.consumer.concurrency = 4;
  deps.make_source = [&](const ec::task::Task& task, const ec::registry::ExportDefinition&,
                         const ec::registry::RegistrySnapshot&)
      -> ec::StatusOr<std::unique_ptr<ec::source::RowSource>> {
    // Called right after the claim made the task RUNNING.
    const auto now = Clock::now();
    std::lock_guard lock(mu);
    if (task.requested_by != "bench-warm-up") {
      latencies.push_back(Ms(now - created_at.at(task.id)));
      ++running;
    } else {
      warmed_up = true;
    }
    return std::unique_ptr<ec::source::RowSource>(new EmptySource);
  };
  deps.make_writer =
      [](ec::task::FileFormat, ec::ByteSink* sink,
         const ec::render::WriterOptions& o) -> ec::StatusOr<std::unique_ptr<ec::render::Writer>> {
    return ec::render::NewCsvWriter(sink, o);
  };
  dispatch::PublisherOptions publisher_options;  // polls every 5 s; woken by each commit
  dispatch::OutboxPublisher publisher(store.get(), channel.get(), publisher_options, "bench");
  dispatch::Consumer consumer(channel.get(), deps);
  publisher.Start();
  consumer.Start();
  for (int i = -1; i < tasks; ++i) {
    ec::store::NewTask t;
    t.tenant_id = "1";
    // Task -1 warms the pipeline up (a broker consumer first gets its queues).
    t.requested_by = i < 0 ? "bench-warm-up" : "bench-user-" + std::to_string(i);
    t.export_type = def.name;
    t.task_name = "bench";
    t.format = ec::task::FileFormat::kCsv;
    t.parameters_json = "{}";
    t.params_hash = "h" + std::to_string(i);
    const auto start = Clock::now();
    // Recorded under the lock the consumer takes, so it is seen before the claim.
    std::unique_lock lock(mu);
    auto created = store->CreateTask(t, ec::store::CreateLimits{0, 100, 100000});
    if (!created.ok()) Die("create: " + created.status().ToString());
    created_at[created->task.id] = start;
    lock.unlock();
    publisher.Wake();
    for (int w = 0; i < 0 && !warmed_up.load() && w < 6000; ++w) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (i < 0 && !warmed_up.load()) Die("the warm-up task never ran");
    // A steady stream, not a burst: latency, not queueing, is measured.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto deadline = Clock::now() + std::chrono::minutes(2);
  while (running.load() < tasks && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  consumer.Stop();
  publisher.Stop();
  channel->Close();
  if (running.load() != tasks) {
    Die("only " + std::to_string(running.load()) + " of " + std::to_string(tasks) + " tasks ran");
  }
  out->tasks = tasks;
  out->create_p50_ms = Percentile(latencies, 0.50);
  out->create_p99_ms = Percentile(latencies, 0.99);
  out->create_max_ms = Percentile(latencies, 1.0);
}

void Print(const char* name, const Figures& f) {
  std::printf(
      "%-9s throughput %8.0f commands/s (publish %8.0f/s), publish->handler p50 %7.2f ms p99 "
      "%7.2f ms | create->RUNNING (%d tasks) p50 %7.2f ms p99 %7.2f ms max %7.2f ms\n",
      name, f.commands_per_second, f.publish_per_second, f.delivery_p50_ms, f.delivery_p99_ms,
      f.tasks, f.create_p50_ms, f.create_p99_ms, f.create_max_ms);
  std::fflush(stdout);
}

#ifdef EXPORT_CENTER_WITH_ROCKETMQ
// A throwaway NameServer + broker, stopped by its pids when the bench ends.
class ThrowawayBroker {
 public:
  explicit ThrowawayBroker(std::string dir) : dir_(std::move(dir)) {
    const std::string cmd = std::string(EC_TEST_ROCKETMQ_SCRIPT) + " start " + dir_;
    FILE* out = popen(cmd.c_str(), "r");
    if (out == nullptr) Die("cannot run " + cmd);
    char line[256];
    while (std::fgets(line, sizeof line, out) != nullptr) address_ = line;
    if (pclose(out) != 0) Die(cmd + " failed");
    while (!address_.empty() && (address_.back() == '\n' || address_.back() == '\r')) {
      address_.pop_back();
    }
  }
  ~ThrowawayBroker() {
    const std::string cmd = std::string(EC_TEST_ROCKETMQ_SCRIPT) + " stop " + dir_;
    if (std::system(cmd.c_str()) != 0)
      std::fprintf(stderr, "channel_bench: %s failed\n", cmd.c_str());
  }
  const std::string& address() const { return address_; }

 private:
  std::string dir_;
  std::string address_;
};
#endif

}  // namespace

int main(int argc, char** argv) {
  int commands = 2000;
  int tasks = 300;
  std::string namesrv;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--commands") {
      commands = std::atoi(argv[i + 1]);
    } else if (flag == "--tasks") {
      tasks = std::atoi(argv[i + 1]);
    } else if (flag == "--namesrv") {
      namesrv = argv[i + 1];
    } else if (flag == "--only") {
      only = argv[i + 1];
    } else {
      Die("unknown flag " + flag);
    }
  }
  spdlog::set_level(spdlog::level::warn);
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("channel-bench-" + std::to_string(getpid())))
          .string();
  std::printf("channel_bench: %d commands, %d tasks, 4 consumer threads\n", commands, tasks);

  if (only.empty() || only == "embedded") {
    ChannelFactory open = [] { return dispatch::NewEmbeddedCommandChannel(3); };
    Figures f;
    MeasureThroughput(open, commands, &f);
    MeasureCreateToRunning(open, tasks, dir + "/embedded", &f);
    Print("embedded", f);
  }
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
  if (only.empty() || only == "rocketmq") {
    std::unique_ptr<ThrowawayBroker> broker;
    if (namesrv.empty()) {
      broker = std::make_unique<ThrowawayBroker>(dir + "/broker");
      namesrv = broker->address();
    }
    dispatch::ChannelOptions options;
    options.kind = "rocketmq";
    options.rocketmq.namesrv_addr = namesrv;
    options.rocketmq.topic_prefix = "bench-" + std::to_string(getpid()) + "-";
    if (auto s = dispatch::InitRocketMq(options, [](const std::string&) {}); !s.ok()) {
      Die("rocketmq init: " + s.ToString());
    }
    ChannelFactory open = [options] {
      return Must(dispatch::NewRocketMqCommandChannel(options), "open rocketmq channel");
    };
    Figures f;
    MeasureThroughput(open, commands, &f);
    MeasureCreateToRunning(open, tasks, dir + "/rocketmq", &f);
    Print("rocketmq", f);
    std::printf("goal: create->RUNNING p99 <= 200 ms on RocketMQ: %s\n",
                f.create_p99_ms <= 200 ? "met" : "NOT met");
  }
#endif
  std::filesystem::remove_all(dir);
  return 0;
}
