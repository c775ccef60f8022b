#pragma once
// The options of the RocketMQ command channel (rocketmq_command_channel.h),
// beside it so that config/, which fills them, needs no channel code. Plain
// data: standard headers only (scripts/check-deps.py).

#include <functional>
#include <optional>
#include <string>

namespace export_center::dispatch {

// channel.kind: rocketmq — the Remoting protocol straight to NameServer +
// Broker (docs/deploy.md#rocketmq).
struct RocketMqChannelOptions {
  // "host:port[;host:port...]": the NameServers (env EXPORT_CENTER_ROCKETMQ_NAMESRV wins).
  std::string namesrv_addr;
  // Put before every topic and group name (docs/deploy.md#the-prefix-rule).
  // Deliberately without a default: a default would silently put production
  // on test topics, so the config check requires the key (the empty string is
  // a valid prefix). nullopt only when the key was absent.
  std::optional<std::string> topic_prefix;
  // One send to the broker; far below publisher.lease-seconds, so a send never
  // outlives the outbox claim that made it.
  int send_timeout_ms = 3000;
  // Every other request to a NameServer or broker: a consumer's pull (on top
  // of its long-poll), offset commit, send-back, heartbeat; route look-ups;
  // `rocketmq init`'s admin requests.
  int consume_timeout_ms = 3000;
  // A cluster with ACL enabled: the user (5.x) or accessKey (4.x plain ACL)
  // and its password / secretKey; every request the center sends is signed
  // with them (docs/deploy.md#required-permissions). Both empty: unsigned.
  // Env EXPORT_CENTER_ROCKETMQ_ACCESS_KEY / EXPORT_CENTER_ROCKETMQ_SECRET_KEY win.
  std::string access_key;
  std::string secret_key;
  // Pulls of a stored message that does not decode (a corrupt record) before
  // the consumer skips it (docs/rocketmq.md#undecodable-messages).
  int undecodable_max_pulls = 3;
  // Set by app/, not read from YAML: called once per skipped message
  // (export_rocketmq_undecodable_skipped_total), on a client I/O thread;
  // must not block. May be empty.
  std::function<void()> on_undecodable_skipped;
};

}  // namespace export_center::dispatch
