#pragma once
// ClientInstance (internal to rocketmq/): what Producer, Admin and
// ClusterConsumer share — the RemotingClient, the client id, NameServer
// lookups with a route cache, and the mapping of response codes to Status.
// Thread-safe.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "rocketmq/admin.h"
#include "rocketmq/client_options.h"
#include "rocketmq/remoting/remoting_client.h"
#include "rocketmq/route_data.h"

namespace export_center::rocketmq {

class ClientInstance {
 public:
  // `handler` receives the requests brokers send this client.
  explicit ClientInstance(const ClientOptions& options,
                          remoting::RemotingClient::RequestHandler handler = nullptr);
  ~ClientInstance();

  const ClientOptions& options() const { return options_; }
  const std::string& client_id() const { return client_id_; }
  remoting::RemotingClient& remoting() { return *remoting_; }

  // Sends `request` to the NameServers in turn (starting with the last one
  // that answered) until one answers. Unavailable when none does.
  StatusOr<remoting::RemotingCommand> InvokeNamesrv(const remoting::RemotingCommand& request);

  // The topic's route from the NameServer (GET_ROUTEINFO_BY_TOPIC); updates
  // the cache. NotFound when the topic does not exist.
  StatusOr<TopicRoute> FetchTopicRoute(const std::string& topic);
  // The cached route when it is younger than route_refresh_interval, else a
  // fetched one; when fetching fails (NameServer down, or no route because
  // the topic's brokers are down), the stale cached route if there is one.
  StatusOr<TopicRoute> TopicRouteOf(const std::string& topic);
  // The master address of `broker_name` from any cached route.
  std::optional<std::string> MasterAddr(const std::string& broker_name);
  // The master addresses of every broker in the cached routes.
  std::set<std::string> KnownBrokerAddrs();

  // A new message id (UNIQ_KEY): 32 hex digits, unique across clients.
  std::string NewMessageId();

  void Shutdown() { remoting_->Shutdown(); }

 private:
  struct CachedRoute {
    TopicRoute route;
    std::chrono::steady_clock::time_point fetched;
  };

  const ClientOptions options_;
  const std::string client_id_;
  std::unique_ptr<remoting::RemotingClient> remoting_;
  Mutex mu_;
  size_t namesrv_index_ GUARDED_BY(mu_) = 0;
  std::map<std::string, CachedRoute> routes_ GUARDED_BY(mu_);
  uint16_t message_counter_ GUARDED_BY(mu_) = 0;
  std::string message_id_prefix_;  // ip, pid and a random part: 20 hex digits
};

// OK for a SUCCESS response; otherwise the failure as a Status whose message
// starts with `what`. The remoting failure itself (no connection, timeout) is
// Unavailable.
Status ResponseStatus(const StatusOr<remoting::RemotingCommand>& response, std::string_view what);
// A non-SUCCESS response code as a Status (see docs/rocketmq.md#errors).
// NO_PERMISSION is Unauthenticated when the remark is an authentication
// failure (IsAuthenticationRemark), else PermissionDenied.
Status CodeStatus(int code, std::string_view what, const std::string& remark);

// Whether a NO_PERMISSION remark says the credentials were refused (missing,
// unknown user, bad signature) rather than a right the user lacks.
bool IsAuthenticationRemark(const std::string& remark);

// Java's String.hashCode of a UTF-8 string (over its UTF-16 code units): the
// tag code the broker filters on.
int32_t JavaStringHash(std::string_view utf8);

// The tags of a subscription expression ("*" -> none, "A || B" -> {A, B}).
std::vector<std::string> ParseTagExpression(std::string_view expression);

// The first non-loopback IPv4 address of this host, else "127.0.0.1".
std::string LocalIpAddress();

}  // namespace export_center::rocketmq
