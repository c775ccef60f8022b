#include "api/task_events.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "api/task_json.h"
#include "common/json_dump.h"
#include "usecase/access.h"

namespace export_center::api {
namespace {

// The poller reads changes in pages of this many, and reads on while pages
// come back full.
constexpr int kPollLimit = 2000;
// Sent keys remembered for the look-back (a few MB); see task_events.h.
constexpr size_t kMaxRemembered = 100000;
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

  bool Sees(const task::Task& task) const { return usecase::CanAccessTask(principal_, task); }
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

TaskEventHub::TaskEventHub(store::TaskCatalog* store, TaskEventsOptions options)
    : store_(store),
      options_(options),
      poller_({"sse_poller", options_.poll_interval, PeriodicWorker::FirstRound::kAfterWait},
              [this] {
                PollOnce();
                SendHeartbeats();
                EndExpiredStreams();
                return PeriodicWorker::Next::Interval();
              }) {}

TaskEventHub::~TaskEventHub() { poller_.Stop(); }

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
    store::TaskCatalog::ChangeQuery q;
    // Changes at the same millisecond as the last one seen may not have been
    // sent yet: start one earlier (a repeat is harmless, a gap is not).
    q.updated_after_ms = *last_event_id - 1;
    q.tenant_id = principal.tenant;
    q.app_code = principal.app;
    q.requested_by = usecase::ListableRequester(principal);
    q.limit = options_.replay_limit;
    EC_ASSIGN_OR_RETURN(std::vector<task::Task> missed, store_->ListChangedTasks(q));
    for (const auto& t : missed) subscriber->Push(TaskEventText(t));
  }
  MutexLock lock(&mu_);
  // Checked again: other streams may have opened while the database answered.
  EC_RETURN_IF_ERROR(CheckCaps(subscriber->user_key()));
  if (!cursor_ && start) cursor_ = store::TaskCatalog::ChangeKey{*start, 0};
  subscribers_.push_back(subscriber);
  if (!started_) {
    started_ = true;
    poller_.Start();
  }
  return std::shared_ptr<http::LiveSource>(std::move(subscriber));
}

void TaskEventHub::PollOnce() {
  {
    MutexLock lock(&mu_);
    if (LiveSubscribersLocked().empty()) {
      // Nobody listens: forget the position; the next listener starts afresh.
      cursor_.reset();
      sent_.clear();
      forgotten_ = {};
      return;
    }
    if (!cursor_) return;
  }
  if (ReadForward()) ReadLookBack();
}

bool TaskEventHub::ReadForward() {
  for (;;) {
    store::TaskCatalog::ChangeQuery q;
    q.limit = kPollLimit;
    {
      MutexLock lock(&mu_);
      if (poller_.Stopping() || !cursor_) return false;
      q.updated_after_ms = cursor_->updated_at;
      q.after_id = cursor_->id;
    }
    auto changed = store_->ListChangedTasks(q);
    if (!changed.ok()) {
      spdlog::warn("task events: reading changed tasks failed: {}", changed.status().ToString());
      return false;
    }
    MutexLock lock(&mu_);
    if (!cursor_) return false;
    const auto subscribers = LiveSubscribersLocked();
    for (const task::Task& t : *changed) SendLocked(t, /*advance=*/true, subscribers);
    ForgetLocked();
    if (static_cast<int>(changed->size()) < kPollLimit) return true;
  }
}

void TaskEventHub::ReadLookBack() {
  using Key = store::TaskCatalog::ChangeKey;
  store::TaskCatalog::ChangeQuery q;
  q.limit = kPollLimit;
  {
    MutexLock lock(&mu_);
    if (!cursor_) return;
    const Key from = std::max(Key{cursor_->updated_at - options_.overlap.count(), 0}, forgotten_);
    q.updated_after_ms = from.updated_at;
    q.after_id = from.id;
    q.up_to = *cursor_;
  }
  // First the keys only (index-only), to find the first one not sent.
  std::optional<Key> first_late;
  while (!first_late) {
    auto keys = store_->ListChangeKeys(q);
    if (!keys.ok()) {
      spdlog::warn("task events: reading changed keys failed: {}", keys.status().ToString());
      return;
    }
    {
      MutexLock lock(&mu_);
      for (const Key& k : *keys) {
        if (!sent_.contains(k)) {
          first_late = k;
          break;
        }
      }
    }
    if (static_cast<int>(keys->size()) < kPollLimit) break;
    q.updated_after_ms = keys->back().updated_at;
    q.after_id = keys->back().id;
  }
  if (!first_late) return;
  // Then the rows from there up to the cursor; the ones sent are skipped.
  q.updated_after_ms = first_late->updated_at;
  q.after_id = first_late->id - 1;
  for (;;) {
    auto changed = store_->ListChangedTasks(q);
    if (!changed.ok()) {
      spdlog::warn("task events: reading late changes failed: {}", changed.status().ToString());
      return;
    }
    MutexLock lock(&mu_);
    if (!cursor_) return;
    const auto subscribers = LiveSubscribersLocked();
    for (const task::Task& t : *changed) SendLocked(t, /*advance=*/false, subscribers);
    ForgetLocked();
    if (static_cast<int>(changed->size()) < kPollLimit) return;
    q.updated_after_ms = changed->back().updated_at;
    q.after_id = changed->back().id;
  }
}

void TaskEventHub::SendLocked(const task::Task& t, bool advance,
                              const std::vector<std::shared_ptr<Subscriber>>& subscribers) {
  const store::TaskCatalog::ChangeKey key{t.updated_at, t.id};
  if (advance) cursor_ = std::max(*cursor_, key);
  if (!sent_.insert(key).second) return;
  const std::string text = TaskEventText(t);
  for (const auto& s : subscribers) {
    if (s->Sees(t)) s->Push(text);
  }
}

void TaskEventHub::ForgetLocked() {
  const int64_t window_start = cursor_->updated_at - options_.overlap.count();
  while (!sent_.empty() &&
         (sent_.begin()->updated_at < window_start || sent_.size() > kMaxRemembered)) {
    if (sent_.begin()->updated_at >= window_start)
      forgotten_ = std::max(forgotten_, *sent_.begin());
    sent_.erase(sent_.begin());
  }
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
