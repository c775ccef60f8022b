#include "rocketmq/client_instance.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/ascii.h"
#include "common/encoding.h"
#include "common/ids.h"
#include "rocketmq/remoting/codes.h"

namespace export_center::rocketmq {
namespace {

using remoting::RemotingCommand;
namespace rc = remoting::response_code;

std::string MakeClientId(const ClientOptions& options) {
  // Every client object of the process gets its own number, so two consumers
  // of one group in one process are two members (RocketMQ's Java client
  // shares one instance per process instead).
  static std::atomic<int> counter{0};
  const std::string instance =
      options.instance_name.empty() ? std::to_string(getpid()) : options.instance_name;
  return LocalIpAddress() + "@" + instance + "#" + std::to_string(counter.fetch_add(1));
}

// RocketMQ spells message ids in upper-case hex.
std::string HexBytes(const unsigned char* bytes, size_t n) {
  return HexEncodeUpper(std::string_view(reinterpret_cast<const char*>(bytes), n));
}

std::string MakeMessageIdPrefix() {
  unsigned char bytes[10] = {};
  in_addr ip{};
  inet_pton(AF_INET, LocalIpAddress().c_str(), &ip);
  std::memcpy(bytes, &ip.s_addr, 4);
  const uint32_t pid = static_cast<uint32_t>(getpid());
  bytes[4] = static_cast<unsigned char>(pid >> 8);
  bytes[5] = static_cast<unsigned char>(pid);
  if (!SecureRandomBytes(bytes + 6, 4)) {
    const int64_t id = NextId();  // time-based fallback; uniqueness still holds per process
    std::memcpy(bytes + 6, &id, 4);
  }
  return HexBytes(bytes, sizeof bytes);
}

}  // namespace

ClientInstance::ClientInstance(const ClientOptions& options,
                               remoting::RemotingClient::RequestHandler handler)
    : options_(options),
      client_id_(MakeClientId(options)),
      remoting_(std::make_unique<remoting::RemotingClient>(
          remoting::RemotingClientOptions{options.request_timeout, options.reconnect_backoff_min,
                                          options.reconnect_backoff_max, options.credentials},
          std::move(handler))),
      message_id_prefix_(MakeMessageIdPrefix()) {}

ClientInstance::~ClientInstance() { remoting_->Shutdown(); }

StatusOr<RemotingCommand> ClientInstance::InvokeNamesrv(const RemotingCommand& request) {
  const size_t n = options_.namesrv_addrs.size();
  if (n == 0) return InvalidArgument("no NameServer address configured");
  size_t start;
  {
    MutexLock lock(&mu_);
    start = namesrv_index_;
  }
  Status last = Unavailable("no NameServer answered");
  for (size_t i = 0; i < n; ++i) {
    const size_t index = (start + i) % n;
    const std::string& addr = options_.namesrv_addrs[index];
    StatusOr<RemotingCommand> response = remoting_->Invoke(addr, request, options_.request_timeout);
    if (response.ok()) {
      MutexLock lock(&mu_);
      namesrv_index_ = index;
      return response;
    }
    last = Unavailable("NameServer " + addr + ": " + response.status().message());
  }
  return last;
}

StatusOr<TopicRoute> ClientInstance::FetchTopicRoute(const std::string& topic) {
  RemotingCommand request = RemotingCommand::Request(remoting::request_code::kGetRouteInfoByTopic);
  request.Set("topic", topic).Set("acceptStandardJsonOnly", true);
  StatusOr<RemotingCommand> response = InvokeNamesrv(request);
  EC_RETURN_IF_ERROR(ResponseStatus(response, "route of topic " + topic));
  EC_ASSIGN_OR_RETURN(TopicRoute route, ParseTopicRoute(response->body));
  MutexLock lock(&mu_);
  routes_[topic] = CachedRoute{route, std::chrono::steady_clock::now()};
  return route;
}

StatusOr<TopicRoute> ClientInstance::TopicRouteOf(const std::string& topic) {
  std::optional<TopicRoute> stale;
  {
    MutexLock lock(&mu_);
    auto it = routes_.find(topic);
    if (it != routes_.end()) {
      if (std::chrono::steady_clock::now() - it->second.fetched < options_.route_refresh_interval) {
        return it->second.route;
      }
      stale = it->second.route;
    }
  }
  StatusOr<TopicRoute> fresh = FetchTopicRoute(topic);
  // NotFound too: the NameServer drops a topic's route while its only broker
  // is down, which is an outage to ride out, not a deleted topic. A topic
  // really deleted shows as TOPIC_NOT_EXIST from the broker itself.
  if (!fresh.ok() && stale) return *stale;
  return fresh;
}

std::optional<std::string> ClientInstance::MasterAddr(const std::string& broker_name) {
  MutexLock lock(&mu_);
  for (const auto& [topic, cached] : routes_) {
    if (const std::string* addr = cached.route.MasterAddr(broker_name)) return *addr;
  }
  return std::nullopt;
}

std::set<std::string> ClientInstance::KnownBrokerAddrs() {
  std::set<std::string> addrs;
  MutexLock lock(&mu_);
  for (const auto& [topic, cached] : routes_) {
    for (const TopicRoute::Broker& b : cached.route.brokers) {
      if (!b.master_addr.empty()) addrs.insert(b.master_addr);
    }
  }
  return addrs;
}

std::string ClientInstance::NewMessageId() {
  // Java's layout: a fixed part (ip, pid, random), then 4 bytes of
  // milliseconds since the start of the month and a 2-byte counter.
  uint16_t counter;
  {
    MutexLock lock(&mu_);
    counter = message_counter_++;
  }
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  const int64_t ms_of_month =
      ((((tm.tm_mday - 1) * 24LL + tm.tm_hour) * 60 + tm.tm_min) * 60 + tm.tm_sec) * 1000 +
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  unsigned char tail[6] = {
      static_cast<unsigned char>(ms_of_month >> 24), static_cast<unsigned char>(ms_of_month >> 16),
      static_cast<unsigned char>(ms_of_month >> 8),  static_cast<unsigned char>(ms_of_month),
      static_cast<unsigned char>(counter >> 8),      static_cast<unsigned char>(counter)};
  return message_id_prefix_ + HexBytes(tail, sizeof tail);
}

bool IsAuthenticationRemark(const std::string& remark) {
  const std::string lower = ToLowerAscii(remark);
  // The broker's authentication failures (5.x DefaultAuthenticationHandler:
  // "check signature failed.", "username cannot be null." when no AccessKey
  // was sent, "User:x is not found.", "User:x is disabled."; 4.x plain ACL:
  // "... accessKey ...", "Check signature failed ...").
  // 5.x authorization's refusal names the resource, which may contain any
  // of the words below: it is never an authentication failure.
  if (lower.find("has no permission to access") != std::string::npos) return false;
  for (const char* word : {"signature", "username", "accesskey", "authentication"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return lower.rfind("user:", 0) == 0 && (lower.find("not found") != std::string::npos ||
                                          lower.find("disabled") != std::string::npos);
}

Status CodeStatus(int code, std::string_view what, const std::string& remark) {
  const std::string message = std::string(what) + ": broker answered code " + std::to_string(code) +
                              (remark.empty() ? "" : " (" + remark + ")");
  switch (code) {
    case rc::kSuccess:
      return Status::Ok();
    case rc::kSystemError:
    case rc::kSystemBusy:
    case rc::kServiceNotAvailable:
    case rc::kFlushDiskTimeout:
    case rc::kFlushSlaveTimeout:
    case rc::kSlaveNotAvailable:
    case rc::kPullRetryImmediately:
      return Unavailable(message);
    case rc::kTopicNotExist:
    case rc::kSubscriptionGroupNotExist:
    case rc::kSubscriptionNotExist:
    case rc::kQueryNotFound:
    case rc::kPullNotFound:
      return NotFound(message);
    case rc::kNoPermission:
      // One response code for both ACL checks: tell a bad or missing key
      // (the operator's fix: the credentials) from a user without a right.
      if (IsAuthenticationRemark(remark)) {
        return Unauthenticated(std::string(what) +
                               ": RocketMQ authentication failed: the broker refused the "
                               "request's credentials (" +
                               remark + "); check the access key and secret key");
      }
      return PermissionDenied(message + ": the RocketMQ user lacks this permission");
    case rc::kMessageIllegal:
    case rc::kInvalidParameter:
      return InvalidArgument(message);
    default:
      return Internal(message);
  }
}

Status ResponseStatus(const StatusOr<RemotingCommand>& response, std::string_view what) {
  if (!response.ok()) {
    const Status& s = response.status();
    // A lost or late answer is transient from the caller's point of view.
    return Unavailable(std::string(what) + ": " + s.message());
  }
  return CodeStatus(response->code, what, response->remark);
}

int32_t JavaStringHash(std::string_view utf8) {
  uint32_t h = 0;
  auto add = [&h](uint32_t unit) { h = 31 * h + unit; };
  for (size_t i = 0; i < utf8.size();) {
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else if (c >= 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xC0) {
      len = 2;
      cp = c & 0x1F;
    }
    if (i + len > utf8.size()) {  // malformed tail: hash the byte
      len = 1;
      cp = c;
    }
    for (size_t k = 1; k < len; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      add(0xD800 + (cp >> 10));
      add(0xDC00 + (cp & 0x3FF));
    } else {
      add(cp);
    }
    i += len;
  }
  return static_cast<int32_t>(h);
}

std::vector<std::string> ParseTagExpression(std::string_view expression) {
  std::vector<std::string> tags;
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  expression = trim(expression);
  if (expression.empty() || expression == "*") return tags;
  while (true) {
    const size_t bar = expression.find("||");
    std::string_view tag = trim(expression.substr(0, bar));
    if (!tag.empty() && std::find(tags.begin(), tags.end(), tag) == tags.end()) {
      tags.emplace_back(tag);
    }
    if (bar == std::string_view::npos) break;
    expression.remove_prefix(bar + 2);
  }
  return tags;
}

std::string LocalIpAddress() {
  std::string result = "127.0.0.1";
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return result;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127) continue;
    char buf[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf)) {
      result = buf;
      break;
    }
  }
  freeifaddrs(list);
  return result;
}

}  // namespace export_center::rocketmq
