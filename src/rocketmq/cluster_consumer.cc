#include "rocketmq/cluster_consumer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/mutex.h"
#include "common/nesting.h"
#include "common/thread_guard.h"
#include "common/utf8.h"
#include "rocketmq/allocate.h"
#include "rocketmq/client_instance.h"
#include "rocketmq/remoting/codes.h"

namespace export_center::rocketmq {
namespace {

using remoting::RemotingCommand;
namespace code = remoting::request_code;

// The broker refused the credentials or a right (ACL): nothing heals it but
// the operator, unlike a broker that is down.
bool IsAccessRefused(const Status& s) {
  return s.code() == StatusCode::kUnauthenticated || s.code() == StatusCode::kPermissionDenied;
}
namespace rc = remoting::response_code;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// PullSysFlag bits.
constexpr int kPullCommitOffset = 1 << 0;
constexpr int kPullSuspend = 1 << 1;
constexpr int kPullSubscription = 1 << 2;

// How long the service thread sleeps at most between rounds.
constexpr milliseconds kServiceTick{100};
// Pull back-off after a failed pull: doubles up to the max.
constexpr milliseconds kPullBackoffMin{200};
constexpr milliseconds kPullBackoffMax{3000};
// A rebalance that could not complete (no route yet, no member list) is
// tried again this soon instead of after rebalance_interval.
constexpr milliseconds kRebalanceRetry{1000};
// How much of a decoder error a log line and UndecodableSkip quote.
constexpr size_t kErrorExcerptBytes = 300;

std::string RetryTopic(const std::string& group) { return "%RETRY%" + group; }

milliseconds PullBackoff(int failures) {
  milliseconds d = kPullBackoffMin * (1 << std::min(failures - 1, 8));
  return std::min(d, kPullBackoffMax);
}

nlohmann::json SubscriptionJson(const std::string& topic, const std::string& expression,
                                int64_t version) {
  nlohmann::json tags = nlohmann::json::array();
  nlohmann::json codes = nlohmann::json::array();
  for (const std::string& tag : ParseTagExpression(expression)) {
    tags.push_back(tag);
    codes.push_back(JavaStringHash(tag));
  }
  return {{"classFilterMode", false}, {"topic", topic},   {"subString", expression},
          {"tagsSet", tags},          {"codeSet", codes}, {"subVersion", version},
          {"expressionType", "TAG"}};
}

}  // namespace

class ClusterConsumer::Impl {
 public:
  explicit Impl(const ConsumerOptions& options)
      : options_(options),
        retry_topic_(RetryTopic(options.group)),
        tags_(ParseTagExpression(options.tag_expression)),
        sub_version_(std::chrono::duration_cast<milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()),
        client_(std::make_unique<ClientInstance>(
            options.client, [this](const std::string& addr, const RemotingCommand& request) {
              return OnServerRequest(addr, request);
            })) {}

  ~Impl() { Shutdown(); }

  void Start() {
    service_ = StartGuardedThread("rmq_service", [this] { ServiceLoop(); });
  }

  std::optional<Received> Take(milliseconds wait) {
    const Clock::time_point deadline = Clock::now() + wait;
    MutexLock lock(&mu_);
    while (true) {
      if (shutdown_) return std::nullopt;
      while (!ready_.empty()) {
        Ready item = std::move(ready_.front());
        ready_.pop_front();
        if (!Owns(item.queue, item.assignment)) continue;  // the queue was given away
        Received r;
        r.message = std::move(item.message);
        r.queue = std::move(item.queue);
        r.assignment = item.assignment;
        return r;
      }
      if (!ready_cv_.WaitUntil(&mu_, deadline) && ready_.empty()) return std::nullopt;
    }
  }

  void Ack(const Received& r) {
    MutexLock lock(&mu_);
    MarkDone(r);
  }

  Status SendBack(const Received& r) {
    {
      MutexLock lock(&mu_);
      if (shutdown_ || !Owns(r.queue, r.assignment)) return Status::Ok();
    }
    Status sent = SendMessageBack(r);
    MutexLock lock(&mu_);
    if (sent.ok()) {
      MarkDone(r);
      return sent;
    }
    spdlog::warn("rocketmq consumer {}: send-back of {} failed, offered again in {} ms: {}",
                 options_.group, r.message.msg_id, options_.local_redelivery_delay.count(),
                 sent.ToString());
    if (Owns(r.queue, r.assignment)) {
      delayed_.push_back(Delayed{Clock::now() + options_.local_redelivery_delay,
                                 Ready{r.queue, r.assignment, r.message}});
    }
    return Unavailable(sent.message());
  }

  void Shutdown() {
    {
      MutexLock lock(&mu_);
      if (shutdown_) return;
      shutdown_ = true;
      ready_cv_.SignalAll();
      service_cv_.SignalAll();
    }
    if (service_.joinable()) service_.join();
    bookkeeping_.CommitOffsets(/*all=*/true);
    for (const std::string& addr : client_->KnownBrokerAddrs()) {
      RemotingCommand request = RemotingCommand::Request(code::kUnregisterClient);
      request.Set("clientID", client_->client_id()).Set("consumerGroup", options_.group);
      (void)client_->remoting().Invoke(addr, std::move(request), options_.client.request_timeout);
    }
    client_->Shutdown();
  }

  std::vector<MessageQueue> AssignedQueues() {
    MutexLock lock(&mu_);
    std::vector<MessageQueue> queues;
    for (const auto& [mq, state] : queues_) queues.push_back(mq);
    return queues;
  }

  const std::string& client_id() const { return client_->client_id(); }

 private:
  // One assigned queue (RocketMQ's ProcessQueue).
  struct QueueState {
    uint64_t assignment = 0;
    bool offset_loaded = false;
    int64_t next_pull_offset = 0;
    // Offsets pulled and not yet done (acknowledged or sent back): the consume
    // offset is the smallest of them, or next_pull_offset when there is none.
    std::set<int64_t> not_done;
    int64_t committed = -1;  // last offset the broker confirmed
    bool pull_in_flight = false;
    Clock::time_point next_pull_at{};
    int pull_failures = 0;
    // Below this offset a pull asks for one message: a batch there failed to
    // decode, and one at a time only the bad record fails (-1: none).
    int64_t isolate_until = -1;
    // The offset whose single-message pull failed to decode, and how often.
    int64_t undecodable_at = -1;
    int undecodable_pulls = 0;
  };
  struct Ready {
    MessageQueue queue;
    uint64_t assignment = 0;
    MessageExt message;
  };
  struct Delayed {
    Clock::time_point at;
    Ready item;
  };
  struct PullJob {
    MessageQueue queue;
    uint64_t assignment;
    int64_t offset;
    int max_msgs;
    std::string addr;
    RemotingCommand request;
  };
  struct CommitJob {
    MessageQueue queue;
    uint64_t assignment;
    int64_t offset;
  };

  // The group's side of the consumer, beside delivery: the heartbeats that
  // make this client a member of the group, the rebalance that gives it its
  // share of the queues (Assign adds and drops entries of queues_), and the
  // offset bookkeeping (where a newly assigned queue starts, and the commits
  // of how far each queue is done). Runs on the service thread, and on the
  // caller's in Shutdown's last commit. It shares the Impl's lock and queue
  // table; delivery (pulls, Take, Ack, send-back) stays in the Impl.
  class Bookkeeping {
   public:
    explicit Bookkeeping(Impl& impl) : impl_(impl) {}

    void SendHeartbeats();
    bool Rebalance();
    void LoadOffsets();
    void CommitOffsets(bool all);

   private:
    std::vector<std::string> Topics() const;
    std::set<std::string> BrokerAddrs();
    StatusOr<std::vector<std::string>> GroupMembers(const TopicRoute& route);
    void Assign(const std::string& topic, const std::vector<MessageQueue>& mine);
    StatusOr<int64_t> ReadCommittedOffset(const MessageQueue& mq, bool* found);
    Status CommitOffset(const CommitJob& job);

    Impl& impl_;
  };

  // ---- called with mu_ held --------------------------------------------

  bool Owns(const MessageQueue& queue, uint64_t assignment) REQUIRES(mu_) {
    auto it = queues_.find(queue);
    return it != queues_.end() && it->second.assignment == assignment;
  }

  void MarkDone(const Received& r) REQUIRES(mu_) {
    auto it = queues_.find(r.queue);
    if (it == queues_.end() || it->second.assignment != r.assignment) return;
    it->second.not_done.erase(r.message.queue_offset);
    service_cv_.Signal();  // a throttled queue may pull again
  }

  static int64_t ConsumeOffset(const QueueState& q) {
    return q.not_done.empty() ? q.next_pull_offset : *q.not_done.begin();
  }

  // ---- the service thread ------------------------------------------------

  void ServiceLoop() {
    Clock::time_point next_heartbeat{}, next_rebalance{}, next_commit{};
    while (true) {
      {
        MutexLock lock(&mu_);
        if (shutdown_) return;
      }
      const Clock::time_point now = Clock::now();
      bool rebalance_now = false;
      {
        MutexLock lock(&mu_);
        rebalance_now = rebalance_requested_;
        rebalance_requested_ = false;
      }
      if (now >= next_heartbeat) {
        bookkeeping_.SendHeartbeats();
        next_heartbeat = now + options_.client.heartbeat_interval;
      }
      if (rebalance_now || now >= next_rebalance) {
        const bool complete = bookkeeping_.Rebalance();
        next_rebalance = Clock::now() + (complete ? options_.rebalance_interval : kRebalanceRetry);
      }
      bookkeeping_.LoadOffsets();
      if (now >= next_commit) {
        bookkeeping_.CommitOffsets(/*all=*/false);
        next_commit = now + options_.offset_commit_interval;
      }
      StartPulls();
      MutexLock lock(&mu_);
      ReleaseDelayed();
      if (!shutdown_ && !rebalance_requested_)
        service_cv_.WaitUntil(&mu_, Clock::now() + kServiceTick);
    }
  }

  void StartPulls() {
    std::vector<PullJob> jobs;
    {
      MutexLock lock(&mu_);
      const Clock::time_point now = Clock::now();
      for (auto& [mq, q] : queues_) {
        if (!q.offset_loaded || q.pull_in_flight || now < q.next_pull_at) continue;
        const int room = options_.max_buffered_per_queue - static_cast<int>(q.not_done.size());
        if (room <= 0) continue;
        std::optional<std::string> addr = client_->MasterAddr(mq.broker_name);
        if (!addr) continue;
        const bool is_retry = mq.topic == retry_topic_;
        const int64_t consume_offset = ConsumeOffset(q);
        int flags = kPullSuspend | kPullSubscription;
        if (consume_offset > 0) flags |= kPullCommitOffset;
        const int max_msgs =
            q.next_pull_offset < q.isolate_until ? 1 : std::min(options_.pull_batch_size, room);
        RemotingCommand request = RemotingCommand::Request(code::kPullMessage);
        request.Set("consumerGroup", options_.group)
            .Set("topic", mq.topic)
            .Set("queueId", mq.queue_id)
            .Set("queueOffset", q.next_pull_offset)
            .Set("maxMsgNums", max_msgs)
            .Set("sysFlag", flags)
            .Set("commitOffset", consume_offset)
            .Set("suspendTimeoutMillis", static_cast<int64_t>(options_.long_poll_timeout.count()))
            .Set("subscription", is_retry ? std::string("*") : options_.tag_expression)
            .Set("subVersion", sub_version_)
            .Set("expressionType", "TAG");
        q.pull_in_flight = true;
        jobs.push_back({mq, q.assignment, q.next_pull_offset, max_msgs, *addr, std::move(request)});
      }
    }
    // Outside the lock: a shut-down client answers on this thread.
    for (PullJob& job : jobs) {
      const milliseconds timeout = options_.long_poll_timeout + options_.client.request_timeout;
      client_->remoting().InvokeAsync(
          job.addr, std::move(job.request), timeout,
          [this, queue = job.queue, assignment = job.assignment, offset = job.offset,
           max_msgs = job.max_msgs](StatusOr<RemotingCommand> r) {
            OnPullResponse(queue, assignment, offset, max_msgs, std::move(r));
          });
    }
  }

  // Runs on the I/O thread: the answer to a pull of up to `max_msgs`
  // messages at `offset`.
  void OnPullResponse(const MessageQueue& mq, uint64_t assignment, int64_t offset, int max_msgs,
                      StatusOr<RemotingCommand> r) {
    StatusOr<std::vector<MessageExt>> messages = std::vector<MessageExt>();
    if (r.ok() && r->code == rc::kSuccess) messages = DecodeMessages(r->body);  // outside the lock
    std::optional<UndecodableSkip> skipped =
        HandlePullResponse(mq, assignment, offset, max_msgs, std::move(r), std::move(messages));
    // Outside the lock: the callback is the caller's (a metric).
    if (skipped && options_.on_undecodable_skipped) options_.on_undecodable_skipped(*skipped);
  }

  // The record of a skipped undecodable message, when this answer made the
  // consumer skip one.
  std::optional<UndecodableSkip> HandlePullResponse(const MessageQueue& mq, uint64_t assignment,
                                                    int64_t offset, int max_msgs,
                                                    StatusOr<RemotingCommand> r,
                                                    StatusOr<std::vector<MessageExt>> messages)
      EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = queues_.find(mq);
    if (shutdown_ || it == queues_.end() || it->second.assignment != assignment) {
      return std::nullopt;
    }
    QueueState& q = it->second;
    q.pull_in_flight = false;
    service_cv_.Signal();
    auto fail = [&](const Status& why) -> std::optional<UndecodableSkip> {
      q.pull_failures++;
      q.next_pull_at = Clock::now() + PullBackoff(q.pull_failures);
      // Say it once, then now and then: a missing group or topic, or a broker
      // that stays down, must show in the log without flooding it.
      if (q.pull_failures == 1 || q.pull_failures % 100 == 0) {
        spdlog::warn("rocketmq consumer {}: pull {} failed ({} in a row): {}", options_.group,
                     mq.ToString(), q.pull_failures, why.ToString());
      }
      return std::nullopt;
    };
    if (!r.ok()) return fail(r.status());
    StatusOr<int64_t> next = r->ExtInt("nextBeginOffset");
    switch (r->code) {
      case rc::kSuccess: {
        if (!messages.ok()) return OnUndecodable(mq, q, offset, max_msgs, next, messages.status());
        if (!next.ok()) return fail(next.status());
        Deliver(mq, q, std::move(*messages));
        q.next_pull_offset = std::max(q.next_pull_offset, *next);
        q.pull_failures = 0;
        q.undecodable_at = -1;
        if (q.next_pull_offset >= q.isolate_until) q.isolate_until = -1;
        return std::nullopt;
      }
      case rc::kPullNotFound:  // nothing new before the long poll ended
      case rc::kPullRetryImmediately:
        if (next.ok()) q.next_pull_offset = std::max(q.next_pull_offset, *next);
        q.pull_failures = 0;
        return std::nullopt;
      case rc::kPullOffsetMoved:
        // Our offset is outside the queue (expired messages, or a queue that
        // lost data): continue where the broker says.
        spdlog::warn("rocketmq consumer {}: offset {} of {} moved to {}", options_.group,
                     q.next_pull_offset, mq.ToString(), next.ok() ? *next : -1);
        if (next.ok()) q.next_pull_offset = *next;
        q.isolate_until = -1;
        q.undecodable_at = -1;
        return std::nullopt;
      default:
        return fail(CodeStatus(r->code, "pull " + mq.ToString(), r->remark));
    }
  }

  // A pull of up to `max_msgs` at `offset` answered with records the decoder
  // refuses. A batch does not say which record is bad (decoding stops at the
  // first bad one, and a bad size loses the framing of all after it), so its
  // range up to the broker's next offset is pulled again one message at a
  // time: the good records around the bad one are delivered, and only the
  // pull of the bad one keeps failing. That pull is tried
  // undecodable_max_pulls times in all (a record corrupted in transit decodes
  // the next time), then the record is skipped: the queue continues after it
  // and its offset is committed past it, instead of the queue standing still
  // for ever. A skipped command is not lost to its task: the reconciler sends
  // a command again when its task is still PENDING sent-stale-seconds after
  // it was SENT (docs/dispatch.md#re-sending-keeps-the-version).
  std::optional<UndecodableSkip> OnUndecodable(const MessageQueue& mq, QueueState& q,
                                               int64_t offset, int max_msgs,
                                               const StatusOr<int64_t>& next, const Status& why)
      REQUIRES(mu_) {
    const std::string error = utf8::Excerpt(why.ToString(), kErrorExcerptBytes);
    const bool next_known = next.ok() && *next > offset;
    if (max_msgs > 1) {
      q.isolate_until = std::max(q.isolate_until, next_known ? *next : offset + max_msgs);
      spdlog::warn(
          "rocketmq consumer {}: a pull of up to {} messages of {} at offset {} does not decode "
          "({}); pulling them again one at a time up to offset {}",
          options_.group, max_msgs, mq.ToString(), offset, error, q.isolate_until);
      return std::nullopt;  // pulled again at once: the broker is not at fault
    }
    if (q.undecodable_at != offset) {
      q.undecodable_at = offset;
      q.undecodable_pulls = 0;
    }
    q.undecodable_pulls++;
    if (q.undecodable_pulls < options_.undecodable_max_pulls) {
      spdlog::warn(
          "rocketmq consumer {}: the message of {} at offset {} does not decode (pull {} "
          "of {}): {}",
          options_.group, mq.ToString(), offset, q.undecodable_pulls,
          options_.undecodable_max_pulls, error);
      q.pull_failures++;
      q.next_pull_at = Clock::now() + PullBackoff(q.pull_failures);
      return std::nullopt;
    }
    const int64_t past = next_known ? *next : offset + 1;
    spdlog::error(
        "rocketmq consumer {}: skips the undecodable message of topic {} queue {}#{} at offset {} "
        "after {} pulls and continues at offset {}: {}",
        options_.group, mq.topic, mq.broker_name, mq.queue_id, offset, q.undecodable_pulls, past,
        error);
    UndecodableSkip skip{mq, offset, q.undecodable_pulls, error};
    q.next_pull_offset = std::max(q.next_pull_offset, past);
    if (q.next_pull_offset >= q.isolate_until) q.isolate_until = -1;
    q.undecodable_at = -1;
    q.undecodable_pulls = 0;
    q.pull_failures = 0;
    return skip;
  }

  void Deliver(const MessageQueue& mq, QueueState& q, std::vector<MessageExt> messages)
      REQUIRES(mu_) {
    const bool filter = !tags_.empty() && mq.topic == options_.topic;
    for (MessageExt& m : messages) {
      if (m.queue_offset < q.next_pull_offset) continue;  // already delivered in this assignment
      // The broker filters on tag hash codes; equal hashes of different tags
      // get through, as in RocketMQ's own clients.
      if (filter && std::find(tags_.begin(), tags_.end(), m.tags) == tags_.end()) continue;
      m.broker_name = mq.broker_name;
      q.not_done.insert(m.queue_offset);
      ready_.push_back(Ready{mq, q.assignment, std::move(m)});
      ready_cv_.Signal();
    }
  }

  void ReleaseDelayed() REQUIRES(mu_) {
    const Clock::time_point now = Clock::now();
    for (auto it = delayed_.begin(); it != delayed_.end();) {
      if (it->at > now) {
        ++it;
        continue;
      }
      if (Owns(it->item.queue, it->item.assignment)) {
        ready_.push_back(std::move(it->item));
        ready_cv_.Signal();
      }
      it = delayed_.erase(it);
    }
  }

  Status SendMessageBack(const Received& r) {
    std::optional<std::string> addr = client_->MasterAddr(r.queue.broker_name);
    if (!addr) return Unavailable("no master for " + r.queue.broker_name);
    RemotingCommand request = RemotingCommand::Request(code::kConsumerSendMsgBack);
    request.Set("offset", r.message.commit_log_offset)
        .Set("group", options_.group)
        .Set("delayLevel", options_.send_back_delay_level)
        .Set("originMsgId", r.message.msg_id)
        .Set("originTopic", r.message.topic)
        .Set("unitMode", false);
    if (options_.max_reconsume_times)
      request.Set("maxReconsumeTimes", *options_.max_reconsume_times);
    return ResponseStatus(
        client_->remoting().Invoke(*addr, std::move(request), options_.client.request_timeout),
        "send back " + r.message.msg_id);
  }

  // Runs on the I/O thread: requests brokers send us.
  std::optional<RemotingCommand> OnServerRequest(const std::string& addr,
                                                 const RemotingCommand& request) {
    if (request.code == code::kNotifyConsumerIdsChanged) {
      MutexLock lock(&mu_);
      rebalance_requested_ = true;
      service_cv_.Signal();
      return RemotingCommand::ResponseTo(request, rc::kSuccess, "");
    }
    return std::nullopt;
  }

  const ConsumerOptions options_;
  const std::string retry_topic_;
  const std::vector<std::string> tags_;
  const int64_t sub_version_;

  Mutex mu_;
  CondVar ready_cv_;    // Take() waits for ready_
  CondVar service_cv_;  // the service thread waits for work
  std::map<MessageQueue, QueueState> queues_ GUARDED_BY(mu_);
  std::deque<Ready> ready_ GUARDED_BY(mu_);
  std::vector<Delayed> delayed_ GUARDED_BY(mu_);
  bool rebalance_requested_ GUARDED_BY(mu_) = true;
  bool shutdown_ GUARDED_BY(mu_) = false;
  uint64_t next_assignment_ GUARDED_BY(mu_) = 1;
  Bookkeeping bookkeeping_{*this};

  // Last: its I/O thread calls back into the members above.
  std::unique_ptr<ClientInstance> client_;
  std::thread service_;
};

// ---- ClusterConsumer::Impl::Bookkeeping: membership, rebalance, offsets ----

std::vector<std::string> ClusterConsumer::Impl::Bookkeeping::Topics() const {
  std::vector<std::string> topics{impl_.options_.topic};
  if (impl_.options_.subscribe_retry_topic) topics.push_back(impl_.retry_topic_);
  return topics;
}

// Brokers of every subscribed topic's route (routes fetched as needed).
std::set<std::string> ClusterConsumer::Impl::Bookkeeping::BrokerAddrs() {
  std::set<std::string> addrs;
  for (const std::string& topic : Topics()) {
    StatusOr<TopicRoute> route = impl_.client_->TopicRouteOf(topic);
    if (!route.ok()) continue;
    for (const TopicRoute::Broker& b : route->brokers) {
      if (!b.master_addr.empty()) addrs.insert(b.master_addr);
    }
  }
  return addrs;
}

void ClusterConsumer::Impl::Bookkeeping::SendHeartbeats() {
  nlohmann::json subscriptions = nlohmann::json::array();
  subscriptions.push_back(
      SubscriptionJson(impl_.options_.topic, impl_.options_.tag_expression, impl_.sub_version_));
  if (impl_.options_.subscribe_retry_topic) {
    subscriptions.push_back(SubscriptionJson(impl_.retry_topic_, "*", impl_.sub_version_));
  }
  nlohmann::json heartbeat = {
      {"clientID", impl_.client_->client_id()},
      {"producerDataSet", nlohmann::json::array()},
      {"consumerDataSet",
       {{{"groupName", impl_.options_.group},
         {"consumeType", "CONSUME_PASSIVELY"},
         {"messageModel", "CLUSTERING"},
         {"consumeFromWhere", "CONSUME_FROM_FIRST_OFFSET"},
         {"subscriptionDataSet", subscriptions},
         {"unitMode", false}}}},
      {"heartbeatFingerprint", 0},
  };
  const std::string body = heartbeat.dump();
  for (const std::string& addr : BrokerAddrs()) {
    RemotingCommand request = RemotingCommand::Request(code::kHeartBeat);
    request.body = body;
    Status s = ResponseStatus(impl_.client_->remoting().Invoke(
                                  addr, std::move(request), impl_.options_.client.request_timeout),
                              "heartbeat to " + addr);
    if (!s.ok()) {
      // Refused credentials or rights are the operator's to fix: say so
      // (every heartbeat interval); anything else heals by itself.
      spdlog::log(IsAccessRefused(s) ? spdlog::level::warn : spdlog::level::debug,
                  "rocketmq consumer {}: {}", impl_.options_.group, s.ToString());
    }
  }
}

// Re-runs the allocation for every subscribed topic. False when a topic
// could not be rebalanced now (its assignment is kept as it is).
bool ClusterConsumer::Impl::Bookkeeping::Rebalance() {
  bool complete = true;
  for (const std::string& topic : Topics()) {
    StatusOr<TopicRoute> route = impl_.client_->TopicRouteOf(topic);
    if (!route.ok()) {
      // The %RETRY% topic appears after the first heartbeat; a topic whose
      // only broker is down has no route for a while: keep what we have.
      complete = false;
      continue;
    }
    std::vector<MessageQueue> all;
    for (const TopicRoute::Queues& q : route->queues) {
      if ((q.perm & kPermRead) == 0 || route->MasterAddr(q.broker_name) == nullptr) continue;
      for (int id = 0; id < q.read_queues; ++id) all.push_back({topic, q.broker_name, id});
    }
    std::sort(all.begin(), all.end());
    StatusOr<std::vector<std::string>> members = GroupMembers(*route);
    if (!members.ok()) {
      spdlog::debug("rocketmq consumer {}: {}", impl_.options_.group, members.status().ToString());
      complete = false;
      continue;
    }
    if (std::find(members->begin(), members->end(), impl_.client_->client_id()) == members->end()) {
      complete = false;  // our heartbeat has not reached the broker yet
      continue;
    }
    Assign(topic, AllocateAveragely(all, *members, impl_.client_->client_id()));
  }
  return complete;
}

StatusOr<std::vector<std::string>> ClusterConsumer::Impl::Bookkeeping::GroupMembers(
    const TopicRoute& route) {
  Status last = Unavailable("topic has no broker");
  for (const TopicRoute::Broker& b : route.brokers) {
    if (b.master_addr.empty()) continue;
    RemotingCommand request = RemotingCommand::Request(code::kGetConsumerListByGroup);
    request.Set("consumerGroup", impl_.options_.group);
    StatusOr<RemotingCommand> response = impl_.client_->remoting().Invoke(
        b.master_addr, std::move(request), impl_.options_.client.request_timeout);
    last = ResponseStatus(response, "members of group " + impl_.options_.group);
    if (!last.ok()) continue;
    // Nested past kMaxNesting: no members read (common/nesting.h).
    auto parsed = ParseJsonWithin<nlohmann::json>(response->body);
    nlohmann::json j = parsed.ok() ? std::move(parsed).value() : nlohmann::json();
    std::vector<std::string> ids;
    if (j.is_object() && j.contains("consumerIdList") && j["consumerIdList"].is_array()) {
      for (const auto& id : j["consumerIdList"]) {
        if (id.is_string()) ids.push_back(id.get<std::string>());
      }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  return last;
}

// Makes `mine` the assigned queues of `topic`: drops the others (their
// offsets are committed first) and adds the new ones (offsets load later).
void ClusterConsumer::Impl::Bookkeeping::Assign(const std::string& topic,
                                                const std::vector<MessageQueue>& mine) {
  std::vector<CommitJob> commits;
  {
    MutexLock lock(&impl_.mu_);
    for (auto it = impl_.queues_.begin(); it != impl_.queues_.end();) {
      const bool keep =
          it->first.topic != topic || std::find(mine.begin(), mine.end(), it->first) != mine.end();
      if (keep) {
        ++it;
        continue;
      }
      spdlog::info("rocketmq consumer {} ({}): gives away {}", impl_.options_.group,
                   impl_.client_->client_id(), it->first.ToString());
      if (it->second.offset_loaded) {
        commits.push_back({it->first, it->second.assignment, ConsumeOffset(it->second)});
      }
      it = impl_.queues_.erase(it);  // its ready messages are skipped by Take()
    }
    for (const MessageQueue& mq : mine) {
      if (impl_.queues_.count(mq) > 0) continue;
      spdlog::info("rocketmq consumer {} ({}): takes {}", impl_.options_.group,
                   impl_.client_->client_id(), mq.ToString());
      QueueState state;
      state.assignment = impl_.next_assignment_++;
      impl_.queues_.emplace(mq, std::move(state));
    }
  }
  for (const CommitJob& job : commits) (void)CommitOffset(job);
}

// Reads the committed offset of each newly assigned queue; a group that
// never committed on a queue starts at the queue's minimum offset
// (CONSUME_FROM_FIRST_OFFSET): nothing published before it is skipped.
void ClusterConsumer::Impl::Bookkeeping::LoadOffsets() {
  std::vector<std::pair<MessageQueue, uint64_t>> to_load;
  {
    MutexLock lock(&impl_.mu_);
    for (const auto& [mq, state] : impl_.queues_) {
      if (!state.offset_loaded && Clock::now() >= state.next_pull_at) {
        to_load.emplace_back(mq, state.assignment);
      }
    }
  }
  for (const auto& [mq, assignment] : to_load) {
    bool found = false;
    StatusOr<int64_t> offset = ReadCommittedOffset(mq, &found);
    MutexLock lock(&impl_.mu_);
    auto it = impl_.queues_.find(mq);
    if (it == impl_.queues_.end() || it->second.assignment != assignment) continue;
    QueueState& q = it->second;
    if (!offset.ok()) {
      q.pull_failures++;
      q.next_pull_at = Clock::now() + PullBackoff(q.pull_failures);
      const bool say =
          IsAccessRefused(offset.status()) && (q.pull_failures == 1 || q.pull_failures % 100 == 0);
      spdlog::log(say ? spdlog::level::warn : spdlog::level::debug,
                  "rocketmq consumer {}: offset of {}: {}", impl_.options_.group, mq.ToString(),
                  offset.status().ToString());
      continue;
    }
    q.offset_loaded = true;
    q.pull_failures = 0;
    q.next_pull_offset = *offset;
    q.committed = found ? *offset : -1;
  }
}

StatusOr<int64_t> ClusterConsumer::Impl::Bookkeeping::ReadCommittedOffset(const MessageQueue& mq,
                                                                          bool* found) {
  std::optional<std::string> addr = impl_.client_->MasterAddr(mq.broker_name);
  if (!addr) return Unavailable("no master for " + mq.broker_name);
  RemotingCommand query = RemotingCommand::Request(code::kQueryConsumerOffset);
  query.Set("consumerGroup", impl_.options_.group)
      .Set("topic", mq.topic)
      .Set("queueId", mq.queue_id)
      .Set("setZeroIfNotFound", false);
  StatusOr<RemotingCommand> response = impl_.client_->remoting().Invoke(
      *addr, std::move(query), impl_.options_.client.request_timeout);
  if (response.ok() && response->code == rc::kSuccess) {
    *found = true;
    return response->ExtInt("offset");
  }
  if (!response.ok() || response->code != rc::kQueryNotFound) {
    return ResponseStatus(response, "offset of " + mq.ToString());
  }
  RemotingCommand min = RemotingCommand::Request(code::kGetMinOffset);
  min.Set("topic", mq.topic).Set("queueId", mq.queue_id);
  response = impl_.client_->remoting().Invoke(*addr, std::move(min),
                                              impl_.options_.client.request_timeout);
  EC_RETURN_IF_ERROR(ResponseStatus(response, "min offset of " + mq.ToString()));
  *found = false;
  return response->ExtInt("offset");
}

// Commits the consume offset of every queue whose offset moved (or of
// every loaded queue when `all`).
void ClusterConsumer::Impl::Bookkeeping::CommitOffsets(bool all) {
  std::vector<CommitJob> jobs;
  {
    MutexLock lock(&impl_.mu_);
    for (const auto& [mq, q] : impl_.queues_) {
      if (!q.offset_loaded) continue;
      const int64_t offset = ConsumeOffset(q);
      if (offset > q.committed || (all && offset >= 0 && offset != q.committed)) {
        jobs.push_back({mq, q.assignment, offset});
      }
    }
  }
  for (const CommitJob& job : jobs) {
    if (!CommitOffset(job).ok()) continue;
    MutexLock lock(&impl_.mu_);
    auto it = impl_.queues_.find(job.queue);
    if (it != impl_.queues_.end() && it->second.assignment == job.assignment) {
      it->second.committed = std::max(it->second.committed, job.offset);
    }
  }
}

Status ClusterConsumer::Impl::Bookkeeping::CommitOffset(const CommitJob& job) {
  std::optional<std::string> addr = impl_.client_->MasterAddr(job.queue.broker_name);
  if (!addr) return Unavailable("no master for " + job.queue.broker_name);
  RemotingCommand request = RemotingCommand::Request(code::kUpdateConsumerOffset);
  request.Set("consumerGroup", impl_.options_.group)
      .Set("topic", job.queue.topic)
      .Set("queueId", job.queue.queue_id)
      .Set("commitOffset", job.offset);
  Status s =
      ResponseStatus(impl_.client_->remoting().Invoke(*addr, std::move(request),
                                                      impl_.options_.client.request_timeout),
                     "commit offset " + std::to_string(job.offset) + " of " + job.queue.ToString());
  if (!s.ok()) spdlog::debug("rocketmq consumer {}: {}", impl_.options_.group, s.ToString());
  return s;
}

StatusOr<std::unique_ptr<ClusterConsumer>> ClusterConsumer::Start(const ConsumerOptions& options) {
  if (options.client.namesrv_addrs.empty())
    return InvalidArgument("no NameServer address configured");
  if (options.group.empty()) return InvalidArgument("consumer group is empty");
  if (options.topic.empty()) return InvalidArgument("consumer topic is empty");
  if (options.pull_batch_size <= 0 || options.max_buffered_per_queue <= 0) {
    return InvalidArgument("pull_batch_size and max_buffered_per_queue must be positive");
  }
  if (options.send_back_delay_level < 0 || options.send_back_delay_level > 18) {
    return InvalidArgument("send_back_delay_level must be 0-18");
  }
  if (options.undecodable_max_pulls < 1) {
    return InvalidArgument("undecodable_max_pulls must be at least 1");
  }
  auto impl = std::make_unique<Impl>(options);
  impl->Start();
  return std::unique_ptr<ClusterConsumer>(new ClusterConsumer(std::move(impl)));
}

ClusterConsumer::ClusterConsumer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterConsumer::~ClusterConsumer() { impl_->Shutdown(); }

std::optional<Received> ClusterConsumer::Take(std::chrono::milliseconds wait) {
  return impl_->Take(wait);
}
void ClusterConsumer::Ack(const Received& received) { impl_->Ack(received); }
Status ClusterConsumer::SendBack(const Received& received) { return impl_->SendBack(received); }
void ClusterConsumer::Shutdown() { impl_->Shutdown(); }
std::vector<MessageQueue> ClusterConsumer::AssignedQueues() const {
  return impl_->AssignedQueues();
}
const std::string& ClusterConsumer::client_id() const { return impl_->client_id(); }

}  // namespace export_center::rocketmq
