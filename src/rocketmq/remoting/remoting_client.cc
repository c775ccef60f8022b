#include "rocketmq/remoting/remoting_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <deque>
#include <future>
#include <map>
#include <thread>
#include <unordered_map>

#include "common/thread_guard.h"
#include "rocketmq/remoting/codes.h"

namespace export_center::rocketmq::remoting {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Splits "host:port"; false when it is not one.
bool SplitAddr(const std::string& addr, std::string* host, std::string* port) {
  const size_t colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size()) return false;
  *host = addr.substr(0, colon);
  *port = addr.substr(colon + 1);
  return std::all_of(port->begin(), port->end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

// Everything below runs on the I/O thread, except the public entry points,
// which only post to it.
class RemotingClient::Loop {
 public:
  Loop(RemotingClientOptions options, RequestHandler handler)
      : options_(options),
        handler_(std::move(handler)),
        work_(asio::make_work_guard(io_)),
        thread_(StartGuardedThread("rmq_remoting", [this] { io_.run(); })) {}

  ~Loop() {
    Shutdown();
    if (thread_.joinable()) thread_.join();
  }

  void InvokeAsync(const std::string& addr, RemotingCommand request,
                   std::chrono::milliseconds timeout, ResponseCallback done) {
    if (stopped_.load()) {
      done(Unavailable("rocketmq client is shut down"));
      return;
    }
    request.opaque = next_opaque_.fetch_add(1);
    request.flag &= ~kFlagOneway;
    SignRequest(options_.credentials, &request);  // here, on the caller's thread, not the I/O one
    asio::post(
        io_, [this, addr, request = std::move(request), timeout, done = std::move(done)]() mutable {
          Send(addr, std::move(request), timeout, std::move(done));
        });
  }

  void InvokeOneway(const std::string& addr, RemotingCommand request) {
    if (stopped_.load()) return;
    request.opaque = next_opaque_.fetch_add(1);
    request.flag |= kFlagOneway;
    SignRequest(options_.credentials, &request);
    asio::post(io_, [this, addr, request = std::move(request)]() mutable {
      Send(addr, std::move(request), std::chrono::milliseconds(0), nullptr);
    });
  }

  void CloseConnection(const std::string& addr) {
    asio::post(io_, [this, addr] {
      auto it = connections_.find(addr);
      if (it != connections_.end())
        Close(it->second, Unavailable("connection to " + addr + " closed"));
    });
  }

  bool OnIoThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  void Shutdown() {
    if (stopped_.exchange(true)) return;
    asio::post(io_, [this] {
      while (!connections_.empty()) {
        Close(connections_.begin()->second, Unavailable("rocketmq client is shut down"));
      }
      work_.reset();
    });
    // From a callback (the I/O thread) it cannot wait for itself: the loop
    // ends after the posted close, and the owner's destructor joins.
    if (!OnIoThread() && thread_.joinable()) thread_.join();
  }

 private:
  struct Pending {
    ResponseCallback done;
    std::unique_ptr<asio::steady_timer> timer;
  };

  struct Connection {
    explicit Connection(asio::io_context& io, std::string a)
        : addr(std::move(a)), socket(io), resolver(io), connect_timer(io) {}
    std::string addr;
    tcp::socket socket;
    tcp::resolver resolver;
    asio::steady_timer connect_timer;
    bool open = false;
    bool closed = false;
    bool writing = false;
    std::deque<std::string> writes;  // frames waiting for the socket
    std::unordered_map<int32_t, Pending> pending;
    FrameReader reader;
    std::array<char, 64 * 1024> read_buffer;
  };
  using ConnectionPtr = std::shared_ptr<Connection>;

  struct Backoff {
    int failures = 0;
    Clock::time_point retry_after{};
  };

  void Send(const std::string& addr, RemotingCommand request, std::chrono::milliseconds timeout,
            ResponseCallback done) {
    if (stopped_.load()) {  // posted just before Shutdown() closed everything
      if (done) done(Unavailable("rocketmq client is shut down"));
      return;
    }
    StatusOr<ConnectionPtr> conn = ConnectionTo(addr);
    if (!conn.ok()) {
      if (done) done(conn.status());
      return;
    }
    ConnectionPtr c = *conn;
    if (done) {
      auto timer = std::make_unique<asio::steady_timer>(io_, timeout);
      const int32_t opaque = request.opaque;
      timer->async_wait([this, c, opaque](const boost::system::error_code& ec) {
        if (ec) return;  // cancelled: answered or closed
        auto it = c->pending.find(opaque);
        if (it == c->pending.end()) return;
        ResponseCallback cb = std::move(it->second.done);
        c->pending.erase(it);
        cb(DeadlineExceeded("no response from " + c->addr + " in time"));
      });
      c->pending.emplace(request.opaque, Pending{std::move(done), std::move(timer)});
    }
    c->writes.push_back(EncodeFrame(request));
    if (c->open) Flush(c);
  }

  // The open or opening connection to `addr`; starts connecting when there
  // is none. Unavailable while the address is in back-off.
  StatusOr<ConnectionPtr> ConnectionTo(const std::string& addr) {
    auto it = connections_.find(addr);
    if (it != connections_.end()) return it->second;
    std::string host, port;
    if (!SplitAddr(addr, &host, &port)) return InvalidArgument("bad address '" + addr + "'");
    Backoff& backoff = backoff_[addr];
    if (Clock::now() < backoff.retry_after) {
      return Unavailable("cannot connect to " + addr + " (retrying after a back-off)");
    }
    auto c = std::make_shared<Connection>(io_, addr);
    connections_[addr] = c;
    c->connect_timer.expires_after(options_.connect_timeout);
    c->connect_timer.async_wait([this, c](const boost::system::error_code& ec) {
      if (!ec && !c->open && !c->closed) ConnectFailed(c, "connect timed out");
    });
    c->resolver.async_resolve(
        host, port, [this, c](const boost::system::error_code& ec, tcp::resolver::results_type r) {
          if (c->closed) return;
          if (ec) return ConnectFailed(c, "resolve: " + ec.message());
          asio::async_connect(c->socket, r,
                              [this, c](const boost::system::error_code& ec, const tcp::endpoint&) {
                                if (c->closed) return;
                                if (ec) return ConnectFailed(c, ec.message());
                                Connected(c);
                              });
        });
    return c;
  }

  void Connected(const ConnectionPtr& c) {
    c->connect_timer.cancel();
    c->open = true;
    backoff_.erase(c->addr);
    boost::system::error_code ignored;
    c->socket.set_option(tcp::no_delay(true), ignored);  // small request frames: no Nagle delay
    Read(c);
    Flush(c);
  }

  void ConnectFailed(const ConnectionPtr& c, const std::string& why) {
    Backoff& backoff = backoff_[c->addr];
    backoff.failures = std::min(backoff.failures + 1, 30);
    auto delay = options_.backoff_min * (1LL << std::min(backoff.failures - 1, 16));
    delay = std::min<std::chrono::milliseconds>(delay, options_.backoff_max);
    backoff.retry_after = Clock::now() + delay;
    Close(c, Unavailable("cannot connect to " + c->addr + ": " + why));
  }

  void Flush(const ConnectionPtr& c) {
    if (c->writing || c->writes.empty() || c->closed) return;
    c->writing = true;
    asio::async_write(c->socket, asio::buffer(c->writes.front()),
                      [this, c](const boost::system::error_code& ec, size_t) {
                        c->writing = false;
                        if (c->closed) return;
                        if (ec) {
                          return Close(c, Unavailable("write to " + c->addr + ": " + ec.message()));
                        }
                        c->writes.pop_front();
                        Flush(c);
                      });
  }

  void Read(const ConnectionPtr& c) {
    c->socket.async_read_some(
        asio::buffer(c->read_buffer), [this, c](const boost::system::error_code& ec, size_t n) {
          if (c->closed) return;
          if (ec) {
            return Close(c, Unavailable("connection to " + c->addr + " lost: " + ec.message()));
          }
          c->reader.Append(std::string_view(c->read_buffer.data(), n));
          while (!c->closed) {
            StatusOr<std::optional<RemotingCommand>> frame = c->reader.Next();
            if (!frame.ok()) {
              spdlog::warn("rocketmq: bad frame from {}: {}", c->addr, frame.status().ToString());
              return Close(c, Unavailable("bad frame from " + c->addr));
            }
            if (!frame->has_value()) break;
            Dispatch(c, std::move(**frame));
          }
          if (!c->closed) Read(c);
        });
  }

  void Dispatch(const ConnectionPtr& c, RemotingCommand command) {
    if (command.is_response()) {
      auto it = c->pending.find(command.opaque);
      if (it == c->pending.end()) return;  // timed out already
      it->second.timer->cancel();
      ResponseCallback cb = std::move(it->second.done);
      c->pending.erase(it);
      cb(std::move(command));
      return;
    }
    std::optional<RemotingCommand> response;
    if (handler_) response = handler_(c->addr, command);
    if (command.is_oneway()) return;
    if (!response) {
      response = RemotingCommand::ResponseTo(command, response_code::kRequestCodeNotSupported,
                                             "request code not supported by this client");
    }
    response->opaque = command.opaque;
    response->flag |= kFlagResponse;
    c->writes.push_back(EncodeFrame(*response));
    Flush(c);
  }

  // Fails the connection's pending requests with `why` and forgets it; the
  // next request to the address opens a new one.
  void Close(const ConnectionPtr& c, const Status& why) {
    if (c->closed) return;
    c->closed = true;
    boost::system::error_code ignored;
    c->connect_timer.cancel();
    c->resolver.cancel();
    c->socket.close(ignored);
    auto it = connections_.find(c->addr);
    if (it != connections_.end() && it->second == c) connections_.erase(it);
    auto pending = std::move(c->pending);
    c->pending.clear();
    c->writes.clear();
    for (auto& [opaque, p] : pending) {
      p.timer->cancel();
      p.done(why);
    }
  }

  const RemotingClientOptions options_;
  const RequestHandler handler_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::atomic<int32_t> next_opaque_{1};
  std::atomic<bool> stopped_{false};
  // I/O thread only:
  std::map<std::string, ConnectionPtr> connections_;
  std::map<std::string, Backoff> backoff_;
  std::thread thread_;  // last: starts once everything above exists
};

RemotingClient::RemotingClient(RemotingClientOptions options, RequestHandler handler)
    : loop_(std::make_unique<Loop>(options, std::move(handler))) {}

RemotingClient::~RemotingClient() { Shutdown(); }

void RemotingClient::InvokeAsync(const std::string& addr, RemotingCommand request,
                                 std::chrono::milliseconds timeout, ResponseCallback done) {
  loop_->InvokeAsync(addr, std::move(request), timeout, std::move(done));
}

StatusOr<RemotingCommand> RemotingClient::Invoke(const std::string& addr, RemotingCommand request,
                                                 std::chrono::milliseconds timeout) {
  if (loop_->OnIoThread()) return Internal("RemotingClient::Invoke on the I/O thread");
  auto promise = std::make_shared<std::promise<StatusOr<RemotingCommand>>>();
  std::future<StatusOr<RemotingCommand>> result = promise->get_future();
  loop_->InvokeAsync(addr, std::move(request), timeout,
                     [promise](StatusOr<RemotingCommand> r) { promise->set_value(std::move(r)); });
  return result.get();
}

void RemotingClient::InvokeOneway(const std::string& addr, RemotingCommand request) {
  loop_->InvokeOneway(addr, std::move(request));
}

void RemotingClient::CloseConnection(const std::string& addr) { loop_->CloseConnection(addr); }

void RemotingClient::Shutdown() { loop_->Shutdown(); }

}  // namespace export_center::rocketmq::remoting
