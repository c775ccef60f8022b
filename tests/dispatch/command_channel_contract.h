#pragma once
// The CommandChannel contract suite's view of a backend
// (command_channel_contract_test.cc): how to get fresh queues for one test and
// channels on them. Each backend of dispatch/command_channel.h provides one.

#include <chrono>
#include <memory>
#include <string>

#include "dispatch/command_channel.h"

namespace export_center::dispatch {

class ChannelBackend {
 public:
  virtual ~ChannelBackend() = default;

  // Fresh, empty queues for the next test; channels opened after this reject
  // a command `delivery_limit` times before it is dead-lettered.
  virtual void Reset(int delivery_limit) = 0;
  // A channel on the current queues. Several open channels are several
  // processes of one deployment (one consumer group).
  virtual std::unique_ptr<CommandChannel> Open() = 0;
  // Whether a second channel sees the queues of the first (a broker), or each
  // channel has its own (the in-process queue).
  virtual bool SharesQueues() const = 0;
  // An upper bound for a rejected delivery or a dead letter to come back.
  virtual std::chrono::milliseconds RedeliveryBound() const = 0;
  // How long "nothing more arrives" is watched.
  virtual std::chrono::milliseconds QuietWindow() const = 0;
};

}  // namespace export_center::dispatch
