#pragma once
// RemotingClient: carries RemotingCommands to "host:port" addresses —
// one TCP connection per address, requests matched to responses by opaque,
// two-way (async or blocking), one-way, per-request timeouts, reconnect with
// back-off, and requests that servers send us (NOTIFY_CONSUMER_IDS_CHANGED).
//
// Why Boost.Asio and one I/O thread, not blocking sockets: a consumer keeps a
// long-poll pull open on every assigned queue while heartbeats, offset
// commits and sends share the same connections; one event loop multiplexes
// them without a reader thread per connection, and its timers give every
// request its deadline. All connection state lives on that thread, so it
// needs no lock.
//
// Thread-safety: every method may be called from any thread. Callbacks run on
// the I/O thread and must not block (no Invoke() there).

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "rocketmq/remoting/acl_signer.h"
#include "rocketmq/remoting/remoting_command.h"

namespace export_center::rocketmq::remoting {

struct RemotingClientOptions {
  std::chrono::milliseconds connect_timeout{3000};
  // After a failed connect, requests to that address fail at once for
  // a back-off that doubles from min to max with each failure.
  std::chrono::milliseconds backoff_min{100};
  std::chrono::milliseconds backoff_max{5000};
  // When enabled, every request this client sends (two-way and one-way, to
  // NameServers and brokers) is signed here, in one place (acl_signer.h);
  // the answers to requests a server sent us are not (nor are the Java
  // client's).
  AclCredentials credentials;
};

class RemotingClient {
 public:
  // The response, or Unavailable (cannot connect, connection lost, client
  // shut down) or DeadlineExceeded (no response in time).
  using ResponseCallback = std::function<void(StatusOr<RemotingCommand>)>;
  // A request a server sent us. Returns the response of a two-way request;
  // nullopt answers REQUEST_CODE_NOT_SUPPORTED. Runs on the I/O thread.
  using RequestHandler = std::function<std::optional<RemotingCommand>(const std::string& addr,
                                                                      const RemotingCommand&)>;

  explicit RemotingClient(RemotingClientOptions options, RequestHandler handler = nullptr);
  ~RemotingClient();  // Shutdown()
  RemotingClient(const RemotingClient&) = delete;
  RemotingClient& operator=(const RemotingClient&) = delete;

  // Sends `request` (its opaque is assigned here) and calls `done` exactly
  // once with the response or the failure — on the I/O thread, or on the
  // calling thread when the client is shut down.
  void InvokeAsync(const std::string& addr, RemotingCommand request,
                   std::chrono::milliseconds timeout, ResponseCallback done);

  // Blocking InvokeAsync. Internal when called on the I/O thread.
  StatusOr<RemotingCommand> Invoke(const std::string& addr, RemotingCommand request,
                                   std::chrono::milliseconds timeout);

  // Queues a one-way request; no answer, no error (it is lost when the
  // address cannot be reached).
  void InvokeOneway(const std::string& addr, RemotingCommand request);

  // Closes the connection to `addr` (pending requests fail with Unavailable).
  void CloseConnection(const std::string& addr);

  // Fails every pending request, closes every connection and stops the I/O
  // thread. Idempotent.
  void Shutdown();

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace export_center::rocketmq::remoting
