#pragma once
// Producer: sends messages to a topic over the Remoting protocol
// (SEND_MESSAGE_V2), straight to the brokers the NameServer routes to.
//
// Queues are picked round-robin over the writable queues of the topic's
// route; a failed send is retried on another queue, preferring another
// broker, up to 2 retries (3 attempts) within the caller's timeout. A broker
// that did not answer is avoided for a while, and an attempt gets only half
// the remaining time while another broker could take the retry
// (BrokerFaultTracker, docs/rocketmq.md#a-broker-that-does-not-answer). Routes
// are fetched on first use and refreshed every route_refresh_interval.
// Start() does not contact the cluster: a producer can be started while the
// NameServer or the brokers are down, and Send reports Unavailable until they
// are back. Thread-safe: any thread may call Send concurrently.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "rocketmq/client_options.h"
#include "rocketmq/message.h"

namespace export_center::rocketmq {

struct SendResult {
  std::string msg_id;         // the UNIQ_KEY the producer gave the message
  std::string offset_msg_id;  // the broker's store id
  MessageQueue queue;
  int64_t queue_offset = 0;
};

class Producer {
 public:
  // InvalidArgument on bad options (no NameServer address, empty group).
  static StatusOr<std::unique_ptr<Producer>> Start(const ClientOptions& options,
                                                   const std::string& group);
  // Shutdown() if not yet done.
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Sends one message and waits for the broker's answer (stored; the broker
  // flushes asynchronously). Not idempotent: a send whose answer was lost may
  // have been stored, and a retry stores it again (consumers deduplicate).
  // Returns InvalidArgument for a bad message (empty topic or body, reserved
  // or malformed property names, a body over 4 MiB), NotFound when the topic
  // does not exist (no route at the NameServer and this producer never had
  // one — also the case while all its brokers are down, so callers retry
  // NotFound like Unavailable), Unavailable when no broker took the
  // message within `timeout` (down, busy, refused), DeadlineExceeded never
  // (a timeout is Unavailable: the caller retries later).
  StatusOr<SendResult> Send(const Message& message, std::chrono::milliseconds timeout);

  // Unregisters the producer group from every broker it talked to
  // (UNREGISTER_CLIENT) and closes the connections. Idempotent; Send fails
  // with Unavailable afterwards.
  void Shutdown();

  const std::string& client_id() const;

 private:
  class Impl;
  explicit Producer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace export_center::rocketmq
