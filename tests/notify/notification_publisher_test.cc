// The notifier against a real SQLite store and real HTTP receivers on
// loopback (cpp-httplib servers started by the test on free ports). Time
// passes by rewriting next_retry_at / lease_until, never by sleeping through
// a back-off.

#include "notify/notification_publisher.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "http/httplib/httplib_http_client.h"
#include "notify/webhook_signature.h"
#include "store/sqlite/sqlite_task_store.h"
#include "store/task_store.h"
#include "tests/support/server_process.h"

namespace export_center::notify {
namespace {

using nlohmann::json;

constexpr char kSecret[] = "receiver-secret-0123456789";

// One call the receiver saw.
struct Call {
  std::string event_id;
  std::string timestamp;
  std::string signature;
  std::string attempt;
  std::string body;
  int answered = 0;
};

// In a script: answer 200, but only after 1.5 s.
constexpr int kHang = 0;

// A webhook receiver on loopback. Answers the calls of each event with
// `script` in order (its last entry for every later call). A refused
// connection is made by not listening at all.
class Receiver {
 public:
  explicit Receiver(std::vector<int> script) : script_(std::move(script)) {
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lock(mu_);
      Call call{req.get_header_value(kWebhookEventIdHeader),
                req.get_header_value(kWebhookTimestampHeader),
                req.get_header_value(kWebhookSignatureHeader),
                req.get_header_value(kWebhookAttemptHeader),
                req.body,
                0};
      const size_t seen = seen_[call.event_id]++;
      call.answered = script_[std::min(seen, script_.size() - 1)];
      res.status = call.answered;
      if (call.answered == 302) res.set_header("Location", redirect_to_);
      calls_.push_back(call);
      if (call.answered == kHang) {
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        res.status = 200;
      }
    });
  }
  ~Receiver() { Stop(); }

  // Listens on `port` (0: any free port). Returns the port.
  int Start(int port = 0) {
    port_ = port == 0 ? server_.bind_to_any_port("127.0.0.1") : port;
    if (port != 0) {
      EXPECT_TRUE(server_.bind_to_port("127.0.0.1", port));
    }
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    return port_;
  }
  void Stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  void RedirectTo(const std::string& url) { redirect_to_ = url; }
  std::vector<Call> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  std::string url(const std::string& path = "/hooks/export") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  std::vector<int> script_;
  std::string redirect_to_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<Call> calls_;
  std::map<std::string, size_t> seen_;  // calls per event id
};

class NotificationPublisherTest : public ::testing::Test, public NotificationObserver {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-notify-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    publisher_.reset();
    store_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Opens (or re-opens, as a restarted process would) the store with the
  // routes of `options`, and a notifier named `instance`.
  void Open(const NotificationOptions& options, const std::string& instance) {
    publisher_.reset();
    store_.reset();
    db_.reset();
    auto opened = store::OpenSqliteTaskStoreWithDatabase(dir_ + "/center.db");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened->store);
    db_ = opened->db;
    ASSERT_TRUE(store_->Migrate().ok());
    store_->SetNotificationRoutes(RoutesOf(options));
    publisher_ = std::make_unique<NotificationPublisher>(
        &store_->notifications(), options, instance, http::HttplibClientFactory(), this);
  }

  // NotificationObserver (the notifier's thread, or the test's for DeliverDueOnce)
  void DeliveryAttempted(const std::string&, DeliveryResult r) override {
    ++results_[std::string(ToString(r))];
  }

  static NotificationOptions Options(const std::string& url) {
    NotificationOptions o;
    o.receivers.push_back({"ops", url, kSecret, {}, {}, {}, {}});
    o.connect_timeout_ms = 500;
    o.timeout_ms = 1000;
    o.max_attempts = 5;
    return o;
  }

  // A task that ends CANCELLED at once: one end event.
  int64_t EndATask(const std::string& user) {
    store::NewTask t;
    t.tenant_id = "t1";
    t.requested_by = user;
    t.export_type = "ORDERS";
    t.task_name = "orders of " + user;
    t.parameters_json = "{}";
    t.params_hash = "h-" + user;
    auto created = store_->CreateTask(t, {});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    EXPECT_EQ(*store_->RequestCancel(created->task.id), task::TaskState::kCancelled);
    return created->task.id;
  }

  // Lets every back-off run out.
  void BackoffPasses() {
    ASSERT_TRUE(db_->Exec("UPDATE export_notification SET next_retry_at = 0"
                          " WHERE status = 'PENDING'")
                    .ok());
  }

  std::vector<store::NotificationEntry> Rows(int64_t task_id) {
    return *store_->notifications().ListNotificationsForTask(task_id);
  }

  std::string dir_;
  std::shared_ptr<store::Database> db_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<NotificationPublisher> publisher_;
  std::map<std::string, int> results_;
};

// The scenario: the receiver is down for the first two calls (refused,
// then 503), and the center restarts between the failures and the success.
TEST_F(NotificationPublisherTest, ADownReceiverGetsExactlyOneAcceptedSignedDeliveryPerEvent) {
  auto port = testing::FreeLoopbackPort();
  ASSERT_TRUE(port.ok());
  Receiver receiver({503, 200});
  const std::string url = "http://127.0.0.1:" + std::to_string(*port) + "/hooks/export";
  Open(Options(url), "center-a");
  const int64_t first = EndATask("alice");
  const int64_t second = EndATask("bob");

  // Call 1: nobody listens — connection refused.
  EXPECT_EQ(publisher_->DeliverDueOnce(), 2);
  EXPECT_EQ(Rows(first)[0].status, store::NotificationStatus::kPending);
  EXPECT_EQ(Rows(first)[0].attempt_count, 1);
  EXPECT_FALSE(Rows(first)[0].last_error->empty());
  // Not due before its back-off.
  EXPECT_EQ(publisher_->DeliverDueOnce(), 0);

  // Call 2: the receiver is up but answers 503.
  receiver.Start(*port);
  BackoffPasses();
  EXPECT_EQ(publisher_->DeliverDueOnce(), 2);
  EXPECT_EQ(*Rows(first)[0].last_error, "HTTP 503");

  // The center restarts (another instance name); nothing was lost.
  Open(Options(url), "center-b");
  BackoffPasses();
  EXPECT_EQ(publisher_->DeliverDueOnce(), 2);
  EXPECT_EQ(Rows(first)[0].status, store::NotificationStatus::kDelivered);
  EXPECT_EQ(Rows(second)[0].status, store::NotificationStatus::kDelivered);
  // Delivered is final.
  BackoffPasses();
  EXPECT_EQ(publisher_->DeliverDueOnce(), 0);

  std::map<std::string, std::vector<Call>> by_event;
  for (const Call& call : receiver.calls()) by_event[call.event_id].push_back(call);
  ASSERT_EQ(by_event.size(), 2u);
  for (const auto& [event_id, calls] : by_event) {
    ASSERT_EQ(calls.size(), 2u) << event_id;  // the refused call never arrived
    EXPECT_EQ(calls[0].answered, 503);
    EXPECT_EQ(calls[1].answered, 200);  // exactly one accepted
    EXPECT_EQ(calls[0].body, calls[1].body);
    EXPECT_EQ(calls[0].attempt, "2");
    EXPECT_EQ(calls[1].attempt, "3");
    for (const Call& call : calls) {
      EXPECT_TRUE(VerifyWebhookSignature(kSecret, call.timestamp, call.body, call.signature));
      json body = json::parse(call.body);
      EXPECT_EQ(body["eventId"], event_id);  // the same id on every retry
      EXPECT_EQ(body["task"]["status"], "CANCELLED");
      EXPECT_EQ(body["eventType"], "export.task.ended");
    }
  }
  EXPECT_EQ(results_["failed"], 4);
  EXPECT_EQ(results_["delivered"], 2);
}

TEST_F(NotificationPublisherTest, AReceiverThatNeverAcceptsEndsDeadAfterMaxAttempts) {
  Receiver receiver({500});
  receiver.Start();
  NotificationOptions options = Options(receiver.url());
  options.max_attempts = 3;
  Open(options, "center-a");
  const int64_t task = EndATask("alice");
  for (int i = 0; i < 5; ++i) {
    publisher_->DeliverDueOnce();
    BackoffPasses();
  }
  EXPECT_EQ(receiver.calls().size(), 3u);
  store::NotificationEntry row = Rows(task)[0];
  EXPECT_EQ(row.status, store::NotificationStatus::kDead);
  EXPECT_EQ(*row.last_error, "HTTP 500");
  EXPECT_EQ(results_["failed"], 2);
  EXPECT_EQ(results_["dead"], 1);
}

TEST_F(NotificationPublisherTest, ASlowReceiverTimesOutAndIsRetried) {
  Receiver receiver({kHang, 200});
  receiver.Start();
  NotificationOptions options = Options(receiver.url());
  options.timeout_ms = 300;
  Open(options, "center-a");
  const int64_t task = EndATask("alice");
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(publisher_->DeliverDueOnce(), 1);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1200));
  EXPECT_EQ(Rows(task)[0].status, store::NotificationStatus::kPending);
  EXPECT_EQ(results_["failed"], 1);
  BackoffPasses();
  EXPECT_EQ(publisher_->DeliverDueOnce(), 1);
  EXPECT_EQ(Rows(task)[0].status, store::NotificationStatus::kDelivered);
}

TEST_F(NotificationPublisherTest, RedirectsAreNotFollowed) {
  Receiver elsewhere({200});
  elsewhere.Start();
  Receiver receiver({302});
  receiver.RedirectTo(elsewhere.url());
  receiver.Start();
  Open(Options(receiver.url()), "center-a");
  const int64_t task = EndATask("alice");
  EXPECT_EQ(publisher_->DeliverDueOnce(), 1);
  EXPECT_EQ(receiver.calls().size(), 1u);
  EXPECT_TRUE(elsewhere.calls().empty());
  EXPECT_EQ(*Rows(task)[0].last_error, "HTTP 302");
  EXPECT_EQ(Rows(task)[0].status, store::NotificationStatus::kPending);
}

TEST_F(NotificationPublisherTest, ARowOfARemovedReceiverIsDeadAtOnce) {
  Receiver receiver({200});
  receiver.Start();
  Open(Options(receiver.url()), "center-a");
  const int64_t task = EndATask("alice");
  NotificationOptions without = Options(receiver.url());
  without.receivers[0].id = "someone-else";
  Open(without, "center-b");
  EXPECT_EQ(publisher_->DeliverDueOnce(), 1);
  EXPECT_TRUE(receiver.calls().empty());
  EXPECT_EQ(Rows(task)[0].status, store::NotificationStatus::kDead);
  EXPECT_NE(Rows(task)[0].last_error->find("no longer configured"), std::string::npos);
}

TEST_F(NotificationPublisherTest, ARowHeldByADeadInstanceIsDeliveredAfterItsLease) {
  Receiver receiver({200});
  receiver.Start();
  Open(Options(receiver.url()), "center-b");
  const int64_t task = EndATask("alice");
  // center-a claimed it and died before sending.
  const int64_t id = Rows(task)[0].id;
  ASSERT_TRUE(store_->notifications().ClaimNotification(id, "center-a", 60)->has_value());
  EXPECT_EQ(publisher_->DeliverDueOnce(), 0);  // its lease is live
  ASSERT_TRUE(db_->Exec("UPDATE export_notification SET lease_until = lease_until - 61000").ok());
  EXPECT_EQ(publisher_->DeliverDueOnce(), 1);
  ASSERT_EQ(receiver.calls().size(), 1u);
  EXPECT_EQ(receiver.calls()[0].attempt, "2");
  EXPECT_EQ(Rows(task)[0].status, store::NotificationStatus::kDelivered);
}

TEST_F(NotificationPublisherTest, TwoInstancesNeverDeliverOneRowTwice) {
  Receiver receiver({200});
  receiver.Start();
  Open(Options(receiver.url()), "center-a");
  for (int i = 0; i < 20; ++i) EndATask("user" + std::to_string(i));
  NotificationPublisher other(&store_->notifications(), Options(receiver.url()), "center-b",
                              http::HttplibClientFactory());
  std::thread b([&] {
    while (other.DeliverDueOnce() > 0) {
    }
  });
  while (publisher_->DeliverDueOnce() > 0) {
  }
  b.join();
  std::map<std::string, int> per_event;
  for (const Call& call : receiver.calls()) ++per_event[call.event_id];
  EXPECT_EQ(per_event.size(), 20u);
  for (const auto& [event, n] : per_event) EXPECT_EQ(n, 1) << event;
}

TEST_F(NotificationPublisherTest, TheRunningLoopDeliversWithoutBeingAsked) {
  Receiver receiver({200});
  receiver.Start();
  NotificationOptions options = Options(receiver.url());
  options.poll_interval_ms = 100;
  Open(options, "center-a");
  publisher_->Start();
  EndATask("alice");
  for (int i = 0; i < 100 && receiver.calls().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  publisher_->Stop();
  EXPECT_EQ(receiver.calls().size(), 1u);
}

}  // namespace
}  // namespace export_center::notify
