#pragma once
// TaskEventHub: live task changes for GET /export-tasks/events as
// Server-Sent Events (docs/http-api.md#get-export-tasksevents--task-events).
//
// Tasks change on every instance of a fleet sharing one database, so changes
// are read from the database, not from this process's own calls: one poller
// thread per process asks TaskCatalog::ListChangedTasks for tasks whose
// updated_at is after the last change it saw (every poll_interval), and fans
// each change out to the subscribers allowed to see it (the list's rules:
// own tasks, or the whole tenant and app with platform:download:all). The
// poller runs only while someone subscribes.
//
// The poller pages by the change key (updated_at, id) from the last change
// it sent, and reads on while pages come back full, so a burst of any size in
// one millisecond passes. updated_at is the database clock at the statement,
// not at commit, so a transaction committing late (PostgreSQL and MySQL run
// writers concurrently) can carry a key below one already sent: every poll
// also reads the keys of the last `overlap` (an index-only read) and sends the
// tasks whose key it has not sent. The keys sent are remembered for that
// window, at most kMaxRemembered of them; past that the look-back reaches
// back only as far as the memory does.
//
// A subscriber is an http::LiveSource: it holds the events not yet written;
// the server polls it on its I/O thread, so an SSE client holds no worker.
// A subscriber that falls more than max_backlog_bytes behind is ended; the
// browser reconnects with Last-Event-ID and is replayed what it missed.
//
// A stream lives no longer than the token that opened it: at the principal's
// valid_until_ms (the token's exp plus the leeway) the poller sends a last
// `event: reauth` and ends it, within one poll interval; the page reconnects
// with its fresh token.
//
// Thread-safe.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/auth.h"
#include "common/mutex.h"
#include "common/periodic_worker.h"
#include "common/status.h"
#include "http/http_response.h"
#include "store/task_catalog.h"

namespace export_center::api {

struct TaskEventsOptions {
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::milliseconds heartbeat{15000};  // a comment line on a quiet stream
  std::chrono::milliseconds overlap{5000};     // look back for late commits
  int max_streams = 1000;                      // per process; over it: 503
  int max_streams_per_user = 5;                // tenant+app+user; over it: 429
  size_t max_backlog_bytes = 1024 * 1024;      // per subscriber; over it: ended
  int replay_limit = 500;                      // changes replayed for Last-Event-ID
};

class TaskEventHub {
 public:
  TaskEventHub(store::TaskCatalog* store, TaskEventsOptions options);
  ~TaskEventHub();
  TaskEventHub(const TaskEventHub&) = delete;
  TaskEventHub& operator=(const TaskEventHub&) = delete;

  // A new stream for `principal`. With `last_event_id` (the updated_at of
  // the last change the client saw) it starts with the caller's changes
  // since then. LimitExceeded over the per-user cap, Unavailable over the
  // total cap or when the database cannot be read.
  StatusOr<std::shared_ptr<http::LiveSource>> Subscribe(const Principal& principal,
                                                        std::optional<int64_t> last_event_id);

  // Whether `principal` may open one more stream now: LimitExceeded over the
  // per-user cap, Unavailable over the total cap, each with a message for
  // the client. Subscribe checks again.
  Status CheckCapacity(const Principal& principal);

  // Open streams right now (for tests and metrics).
  int open_streams();

  class Subscriber;

 private:
  void PollOnce();
  // Reads the changes after the cursor page by page; false when it failed.
  bool ReadForward();
  // Sends the late commits of the last `overlap` not sent yet.
  void ReadLookBack();
  // Sends `t` to the subscribers that see it unless its key was sent;
  // `advance` moves the cursor to it. Requires mu_ and a cursor.
  void SendLocked(const task::Task& t, bool advance,
                  const std::vector<std::shared_ptr<Subscriber>>& subscribers) REQUIRES(mu_);
  // Forgets the sent keys the look-back no longer reaches. Requires mu_.
  void ForgetLocked() REQUIRES(mu_);
  void SendHeartbeats();
  // Sends `event: reauth` to and ends the streams whose token has expired.
  void EndExpiredStreams();
  // Live subscribers; drops the closed ones. Requires mu_.
  std::vector<std::shared_ptr<Subscriber>> LiveSubscribersLocked() REQUIRES(mu_);
  Status CheckCaps(const std::string& user_key) REQUIRES(mu_);

  store::TaskCatalog* const store_;
  const TaskEventsOptions options_;
  Mutex mu_;
  std::vector<std::weak_ptr<Subscriber>> subscribers_ GUARDED_BY(mu_);
  // The key of the last change read forward; unset while nobody listens.
  std::optional<store::TaskCatalog::ChangeKey> cursor_ GUARDED_BY(mu_);
  // Keys sent within the overlap window, oldest first; at most kMaxRemembered.
  std::set<store::TaskCatalog::ChangeKey> sent_ GUARDED_BY(mu_);
  // Keys at or below this were forgotten before they left the window: the
  // look-back starts after it.
  store::TaskCatalog::ChangeKey forgotten_ GUARDED_BY(mu_);
  // Started by the first Subscribe: every poll_interval PollOnce,
  // SendHeartbeats, EndExpiredStreams.
  PeriodicWorker poller_;
  bool started_ GUARDED_BY(mu_) = false;
};

// One Server-Sent Event carrying a task (the GET /export-tasks/{id} shape).
std::string TaskEventText(const task::Task& task);

// The last event of a stream whose token expired: the client should get a
// fresh token (and ticket) and reconnect with Last-Event-ID.
extern const char kReauthEventText[];

}  // namespace export_center::api
