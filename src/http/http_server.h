#pragma once
// The HTTP server seam (docs/http-serving.md).
//
// An HttpServer accepts connections and reads requests on a few I/O threads,
// where a waiting connection costs a socket and a small buffer but no thread.
// Each complete request goes to a worker pool that calls HttpService::Handle,
// which may block (database calls). The response is written back
// asynchronously; a streamed body is pulled one chunk per completed write, so
// slow readers cost memory for one chunk each.
//
// Idle, slow and half-sent connections are bounded by deadlines (header, body,
// keep-alive idle, send) and by caps on connections in total and per client
// address. Every accepted socket gets TCP_NODELAY. A connection's read memory
// is capped (header limit + body limit + one read; chunk-size lines and
// trailers 4 KiB), and request framing follows RFC 9112 (request_framing.h):
// what breaks a limit or a rule is refused and the connection closed.
//
// The only implementation is beast/beast_http_server.h (Boost.Beast on Asio).

#include <chrono>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "http/http_request.h"
#include "http/http_response.h"

namespace export_center::http {

// What the server serves. Both methods must be thread-safe.
class HttpService {
 public:
  virtual ~HttpService() = default;
  // Answers one complete request. Runs on a worker thread and may block.
  virtual HttpResponse Handle(HttpRequest& request) = 0;
  // The answer when the server refuses a request itself: 400 (malformed),
  // 413 (body over the limit), 431 (header too large), 503 (over the
  // connection caps), 500 (Handle threw). `request` holds what was parsed,
  // at least the peer address. Runs on an I/O thread: must not block.
  virtual HttpResponse Reject(const HttpRequest& request, int status) = 0;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;            // 0: any free port (see HttpServer::port)
  int worker_threads = 8;  // run HttpService::Handle and BodySource::Next (not LiveSource)
  int io_threads = 1;      // accept, read, write; never block
  // From a new connection's accept, or a request's first byte, to the end of
  // its header.
  std::chrono::milliseconds header_timeout{10000};
  // From the end of the header to the end of the body.
  std::chrono::milliseconds body_timeout{30000};
  // How long a keep-alive connection may wait for its next request.
  std::chrono::milliseconds idle_timeout{30000};
  // How long one write (a small response, or one chunk of a stream) may take.
  std::chrono::milliseconds send_timeout{60000};
  int max_connections = 4096;
  // IPv4 addresses count one by one, IPv6 by /64 (one host's usual share).
  int max_connections_per_address = 256;
  uint64_t max_body_bytes = 64 * 1024;
  uint32_t max_header_bytes = 16 * 1024;
  size_t stream_chunk_bytes = 64 * 1024;
};

// Counters for tests, benchmarks and metrics; a snapshot.
struct HttpServerStats {
  int64_t open_connections = 0;
  int64_t rejected_connections = 0;   // over a cap
  int64_t timed_out_connections = 0;  // header, body, idle or send deadline
  int64_t requests = 0;               // handed to the service
  int64_t open_streams = 0;           // streamed bodies being written
  int64_t stream_buffer_bytes = 0;    // memory held for them right now
  int64_t live_streams = 0;           // open-ended (LiveSource) bodies open
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;
  // Binds and starts the I/O and worker threads. Unavailable when the address
  // cannot be bound. Call once.
  virtual Status Start() = 0;
  // Stops accepting, closes every connection and waits for running handlers.
  // Idempotent; the destructor calls it.
  virtual void Stop() = 0;
  // The bound port (the chosen one when options.port was 0); 0 before Start.
  virtual int port() const = 0;
  virtual HttpServerStats stats() const = 0;
};

}  // namespace export_center::http
