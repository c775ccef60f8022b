#include "api/task_events.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "api/task_json.h"
#include "common/json_dump.h"
#include "common/thread_guard.h"

namespace export_center::api {
namespace {

// The poller reads at most this many changes per round; more wait for the next.
constexpr int kPollLimit = 2000;
// Sent first: the browser's reconnect delay, and bytes so the stream opens at once.
constexpr char kGreeting[] = "retry: 3000\n: connected\n\n";
constexpr char kHeartbeat[] = ": heartbeat\n\n";

std::string UserKey(const Principal& p) {
  return p.tenant + '\n' + std::string(task::ToString(p.app)) + '\n' + p.user;
}

}  // namespace

const char kReauthEventText[] =
    "event: reauth\ndata: {\"reason\":\"TOKEN_EXPIRED\",\"message\":\"the token that opened this "
    "stream has expired; reconnect with a fresh one\"}\n\n";

std::string TaskEventText(const task::Task& task) {
  // The id is the change's updated_at: a reconnecting browser sends it back
  // as Last-Event-ID and is replayed the changes after it.
  return "id: " + std::to_string(task.updated_at) +
         "\nevent: task\ndata: " + DumpTolerant(TaskToJson(task)) + "\n\n";
}

// One SSE client: the events not yet written, and the server's waker.
class TaskEventHub::Subscriber : public http::LiveSource {
 public:
  Subscriber(Principal principal, size_t max_backlog)
      : principal_(std::move(principal)),
        user_key_(UserKey(principal_)),
        max_backlog_(max_backlog),
        last_push_(std::chrono::steady_clock::now()) {}

  bool Sees(const task::Task& task) const { return CanAccessTask(principal_, task); }
  bool ExpiredAt(int64_t now_ms) const {
    return principal_.valid_until_ms > 0 && now_ms >= principal_.valid_until_ms;
  }
  // Queues `text` as the stream's last bytes: it ends once they are written.
  void PushLast(const std::string& text) {
    Push(text);
    MutexLock lock(&mu_);
    ended_ = true;
    if (waker_) waker_();
  }
  const std::string& user_key() const { return user_key_; }

  // Queues `text` and wakes the connection. Over the backlog the stream ends
  // (the client reconnects and is replayed what it missed).
  void Push(const std::string& text) {
    MutexLock lock(&mu_);
    if (closed_ || ended_) return;
    if (pending_.size() + text.size() > max_backlog_) {
      spdlog::warn("task events: a client fell {} bytes behind; ending its stream",
                   pending_.size());
      pending_.clear();
      ended_ = true;
    } else {
      pending_ += text;
    }
    last_push_ = std::chrono::steady_clock::now();
    // Called under the lock so that no wake follows Close (the LiveSource contract).
    if (waker_) waker_();
  }

  bool IdleSince(std::chrono::steady_clock::time_point t) {
    MutexLock lock(&mu_);
    return last_push_ <= t;
  }

  bool closed() {
    MutexLock lock(&mu_);
    return closed_;
  }

  PollResult Poll(size_t max_bytes, std::string* out) override {
    MutexLock lock(&mu_);
    if (pending_.empty()) return ended_ ? PollResult::kEnd : PollResult::kReady;
    size_t n = std::min(max_bytes, pending_.size());
    out->assign(pending_, 0, n);
    pending_.erase(0, n);
    return PollResult::kReady;
  }

  void SetWaker(std::function<void()> wake) override {
    MutexLock lock(&mu_);
    waker_ = std::move(wake);
    if (!pending_.empty() && waker_) waker_();
  }

  void Close() override {
    MutexLock lock(&mu_);
    closed_ = true;
    waker_ = nullptr;
    std::string().swap(pending_);
  }

 private:
  const Principal principal_;
  const std::string user_key_;
  const size_t max_backlog_;
  Mutex mu_;
  std::string pending_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  bool ended_ GUARDED_BY(mu_) = false;
  std::function<void()> waker_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_push_ GUARDED_BY(mu_);
};

TaskEventHub::TaskEventHub(store::TaskStore* store, TaskEventsOptions options)
    : store_(store), options_(options) {}

TaskEventHub::~TaskEventHub() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.SignalAll();
  if (poller_.joinable()) poller_.join();
}

std::vector<std::shared_ptr<TaskEventHub::Subscriber>> TaskEventHub::LiveSubscribersLocked() {
  std::vector<std::shared_ptr<Subscriber>> live;
  std::vector<std::weak_ptr<Subscriber>> kept;
  for (auto& weak : subscribers_) {
    auto s = weak.lock();
    if (!s || s->closed()) continue;
    live.push_back(s);
    kept.push_back(std::move(weak));
  }
  subscribers_ = std::move(kept);
  return live;
}

Status TaskEventHub::CheckCapacity(const Principal& principal) {
  MutexLock lock(&mu_);
  return CheckCaps(UserKey(principal));
}

int TaskEventHub::open_streams() {
  MutexLock lock(&mu_);
  return static_cast<int>(LiveSubscribersLocked().size());
}

Status TaskEventHub::CheckCaps(const std::string& user_key) {
  auto live = LiveSubscribersLocked();
  if (static_cast<int>(live.size()) >= options_.max_streams) {
    return Unavailable("too many task event streams on this instance (" +
                       std::to_string(options_.max_streams) + "); the page falls back to polling");
  }
  int mine = static_cast<int>(std::count_if(
      live.begin(), live.end(), [&](const auto& s) { return s->user_key() == user_key; }));
  if (mine >= options_.max_streams_per_user) {
    return LimitExceeded("at most " + std::to_string(options_.max_streams_per_user) +
                         " task event streams per user; close another tab");
  }
  return Status::Ok();
}

StatusOr<std::shared_ptr<http::LiveSource>> TaskEventHub::Subscribe(
    const Principal& principal, std::optional<int64_t> last_event_id) {
  auto subscriber = std::make_shared<Subscriber>(principal, options_.max_backlog_bytes);
  {
    MutexLock lock(&mu_);
    EC_RETURN_IF_ERROR(CheckCaps(subscriber->user_key()));
  }
  subscriber->Push(kGreeting);
  std::optional<int64_t> start;
  bool need_cursor = false;
  {
    MutexLock lock(&mu_);
    need_cursor = !cursor_.has_value();
  }
  if (need_cursor) {
    // The first listener: changes from now on are news.
    EC_ASSIGN_OR_RETURN(int64_t now, store_->DatabaseNowMs());
    start = now;
  }
  if (last_event_id) {
    store::TaskStore::ChangeQuery q;
    // Changes at the same millisecond as the last one seen may not have been
    // sent yet: start one earlier (a repeat is harmless, a gap is not).
    q.updated_after_ms = *last_event_id - 1;
    q.tenant_id = principal.tenant;
    q.app_code = principal.app;
    q.requested_by = ListableRequester(principal);
    q.limit = options_.replay_limit;
    EC_ASSIGN_OR_RETURN(std::vector<task::Task> missed, store_->ListChangedTasks(q));
    for (const auto& t : missed) subscriber->Push(TaskEventText(t));
  }
  MutexLock lock(&mu_);
  // Checked again: other streams may have opened while the database answered.
  EC_RETURN_IF_ERROR(CheckCaps(subscriber->user_key()));
  if (!cursor_ && start) cursor_ = start;
  subscribers_.push_back(subscriber);
  if (!started_) {
    started_ = true;
    poller_ = StartGuardedThread("sse_poller", [this] { Run(); });
  }
  return std::shared_ptr<http::LiveSource>(std::move(subscriber));
}

void TaskEventHub::Run() {
  for (;;) {
    {
      MutexLock lock(&mu_);
      const auto deadline = std::chrono::steady_clock::now() + options_.poll_interval;
      while (!stopping_ && wake_.WaitUntil(&mu_, deadline)) {
      }
      if (stopping_) return;
    }
    PollOnce();
    SendHeartbeats();
    EndExpiredStreams();
  }
}

void TaskEventHub::PollOnce() {
  store::TaskStore::ChangeQuery q;
  q.limit = kPollLimit;
  {
    MutexLock lock(&mu_);
    if (LiveSubscribersLocked().empty()) {
      // Nobody listens: forget the position; the next listener starts afresh.
      cursor_.reset();
      sent_.clear();
      return;
    }
    if (!cursor_) return;
    q.updated_after_ms = *cursor_ - options_.overlap.count();
  }
  auto changed = store_->ListChangedTasks(q);
  if (!changed.ok()) {
    spdlog::warn("task events: reading changed tasks failed: {}", changed.status().ToString());
    return;
  }
  MutexLock lock(&mu_);
  if (!cursor_) return;
  auto subscribers = LiveSubscribersLocked();
  for (const task::Task& t : *changed) {
    auto it = sent_.find(t.id);
    if (it != sent_.end() && it->second >= t.updated_at) continue;
    sent_[t.id] = t.updated_at;
    cursor_ = std::max(*cursor_, t.updated_at);
    const std::string text = TaskEventText(t);
    for (const auto& s : subscribers) {
      if (s->Sees(t)) s->Push(text);
    }
  }
  const int64_t forget_before = *cursor_ - options_.overlap.count();
  std::erase_if(sent_, [&](const auto& entry) { return entry.second < forget_before; });
}

void TaskEventHub::EndExpiredStreams() {
  std::vector<std::shared_ptr<Subscriber>> subscribers;
  {
    MutexLock lock(&mu_);
    subscribers = LiveSubscribersLocked();
  }
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  for (const auto& s : subscribers) {
    if (s->ExpiredAt(now_ms)) s->PushLast(kReauthEventText);
  }
}

void TaskEventHub::SendHeartbeats() {
  std::vector<std::shared_ptr<Subscriber>> subscribers;
  {
    MutexLock lock(&mu_);
    subscribers = LiveSubscribersLocked();
  }
  const auto quiet_since = std::chrono::steady_clock::now() - options_.heartbeat;
  for (const auto& s : subscribers) {
    if (s->IdleSince(quiet_since)) s->Push(kHeartbeat);
  }
}

}  // namespace export_center::api
