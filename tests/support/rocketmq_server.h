#pragma once
// RocketMqServer: a throwaway real RocketMQ NameServer + one broker for one
// test binary, started by scripts/test-rocketmq.sh (official 5.x jars, Java).
//
// Start() makes a temp directory and runs `test-rocketmq.sh start DIR`: a
// NameServer and a broker (cluster "TestCluster", broker "broker-a") on
// 127.0.0.1 and free ports, registered with each other. Topics and
// subscription groups are NOT created automatically (autoCreateTopicEnable and
// autoCreateSubscriptionGroup are false, as in production): a test creates
// them. The destructor stops both by their pids and deletes the directory.
// Only the thread that owns the object may call its methods.

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace export_center::testing {

class RocketMqServer {
 public:
  // Unavailable when Java or the RocketMQ jars cannot be had (no java, no
  // Maven), Internal when the servers fail to start (the log tail is in the
  // message). Takes a few seconds.
  static StatusOr<std::unique_ptr<RocketMqServer>> Start();
  // The same with ACL 2.0 on: authentication and authorization enabled and
  // `user` (password `password`) the broker's super user; every request must
  // be signed (scripts/test-rocketmq.sh, EC_TEST_ROCKETMQ_AUTH).
  static StatusOr<std::unique_ptr<RocketMqServer>> StartWithAcl(const std::string& user,
                                                                const std::string& password);

  ~RocketMqServer();
  RocketMqServer(const RocketMqServer&) = delete;
  RocketMqServer& operator=(const RocketMqServer&) = delete;

  // "127.0.0.1:PORT" of the NameServer.
  const std::string& namesrv_addr() const { return namesrv_addr_; }
  // "127.0.0.1:PORT" of the broker (as the NameServer lists it).
  const std::string& broker_addr() const { return broker_addr_; }
  static constexpr const char* kClusterName = "TestCluster";
  static constexpr const char* kBrokerName = "broker-a";

  // kill -9 of the broker (the NameServer stays up); returns once the
  // NameServer no longer lists it.
  Status Kill();
  // Starts the killed broker again on the same ports with the same data;
  // returns once it is registered with the NameServer.
  Status Restart();

  // A second broker, "broker-b", in the same cluster on the same NameServer
  // (test-rocketmq.sh start-b); returns once it is registered. The destructor
  // stops it too. Topics on it are created by the test, as on broker-a.
  Status StartSecondBroker();
  // "127.0.0.1:PORT" of broker-b; empty before StartSecondBroker().
  const std::string& second_broker_addr() const { return second_broker_addr_; }
  static constexpr const char* kSecondBrokerName = "broker-b";

  // SIGSTOP / SIGCONT of a broker by its pid (test-rocketmq.sh freeze|thaw):
  // a frozen broker still accepts connections and answers nothing. `second`
  // picks broker-b. The destructor thaws before stopping.
  Status Freeze(bool second);
  Status Thaw(bool second);

  // The directory holding the configs and logs (DIR/broker.log, DIR/*-home/logs).
  const std::string& dir() const { return dir_; }

  // Four bytes of one stored record of broker-a, overwritten in its commit log
  // (DIR/store/commitlog, 16 MiB files named by their first offset) for the
  // life of the object — as a failing disk or a broker bug would leave them —
  // and put back by the destructor, so a later broker restart recovers the
  // log. The broker serves the bytes as they are (its file is mapped). Corrupt
  // a record only once the broker has indexed it: it reads the record again
  // to build its consume queue.
  class CorruptedRecord {
   public:
    CorruptedRecord(std::string path, int64_t pos, std::string saved)
        : path_(std::move(path)), pos_(pos), saved_(std::move(saved)) {}
    ~CorruptedRecord();
    CorruptedRecord(const CorruptedRecord&) = delete;
    CorruptedRecord& operator=(const CorruptedRecord&) = delete;

   private:
    std::string path_;
    int64_t pos_;
    std::string saved_;
  };
  // Overwrites the 4 bytes at `at` (4: the magic code) of the record at
  // `commit_log_offset` (a message's offset_msg_id ends with it).
  StatusOr<std::unique_ptr<CorruptedRecord>> CorruptRecord(int64_t commit_log_offset, int at) const;
  // The commit log offset of the one stored record whose body is `body`
  // (searched in broker-a's commit log; make the body unique). NotFound when
  // there is none.
  StatusOr<int64_t> CommitLogOffsetOfBody(const std::string& body) const;

 private:
  RocketMqServer() = default;
  static StatusOr<std::unique_ptr<RocketMqServer>> StartWithEnv(const std::string& auth);
  Status RunScript(const std::string& command, const std::string& auth = "",
                   const std::string& broker = "");

  std::string dir_;
  std::string namesrv_addr_;
  std::string broker_addr_;
  std::string second_broker_addr_;
  bool running_ = false;
};

}  // namespace export_center::testing
