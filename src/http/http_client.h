#pragma once
// HttpClient: the one seam of every outbound HTTP call the center makes to a
// business service, a receiver or an object store — provider batches, the SQL
// contract, webhook deliveries, `check`'s reachability probe and every call of
// the S3 client (docs/http-serving.md#outbound-calls). A new outbound caller
// uses it, never a client library of its own.
//
// A client talks to one origin (the base URL it was opened for) and holds at
// most one connection, kept alive between calls when its options say so; a
// caller that needs calls in parallel keeps a pool of clients (the S3 client,
// s3/s3_client.h, does). Each
// call is bounded three ways, in one place instead of in every caller:
//   - the connect timeout, and the read/write timeouts, each bounding one
//     silent gap of the connection;
//   - the request's deadline, bounding the whole answer: a peer that trickles
//     bytes forever is cut off at the first chunk read past it;
//   - the request's body cap: a declared Content-Length past it stops the
//     call before a byte of the body is read, a received body past it stops it
//     at the chunk that passes it.
// Redirects are never followed: the allow-lists vouch for a base URL, not for
// where it points. An https:// base URL is verified as `tls` says.
// A request's body is sent from the request itself, never copied, so a caller
// may lend a large buffer (move it into `body`, and back after Send).
//
// Threads: a client serves one call at a time (thread-compatible); an
// HttpClientFactory is thread-safe. The real implementation is
// http/httplib/httplib_http_client.h; tests use tests/fakes/scripted_http_client.h.

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/status.h"
#include "http/http_request.h"

namespace export_center::http {

// How an https:// origin is trusted: the server's certificate chain and host
// name are verified, against the system trust store or the PEM bundle of
// `ca_cert_file` (a private CA: JWKS, an S3-compatible store).
struct ClientTlsSettings {
  bool verify_server_certificate = true;
  std::string ca_cert_file;  // PEM bundle used instead of the system store when set
};

struct HttpClientOptions {
  std::string base_url;  // "http(s)://host[:port]"; requests name paths below it
  int connect_timeout_ms = 3000;
  int read_timeout_ms = 15000;   // each silent gap while reading the answer
  int write_timeout_ms = 15000;  // each stalled write of the request
  bool keep_alive = false;       // keep the connection for the client's next call
  // Disables Nagle: headers and body go out as separate writes, and with
  // delayed ACK a kept-alive connection would add ~40 ms to every call.
  bool tcp_nodelay = false;
  ClientTlsSettings tls;
};

struct ClientRequest {
  std::string method = "GET";
  std::string path = "/";  // with its query, already encoded (EncodeQueryParam)
  HeaderMap headers;
  std::string body;
  std::string content_type;  // sent as Content-Type when set
  // The whole answer must be read by then; unset: only the timeouts bound it.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  int64_t max_body_bytes = std::numeric_limits<int64_t>::max();
  // false: the call ends once the status line and headers are read, the body
  // is never read (a receiver's endless body costs nothing).
  bool read_body = true;
};

// Why a call got no answer (ClientAnswer::Outcome::kNotSent).
enum class ClientError {
  kNone,
  kConnection,         // refused, unreachable, or the host name did not resolve
  kConnectionTimeout,  // no connection within the connect timeout
  kRead,               // reading the answer failed or passed the read timeout
  kWrite,              // sending the request failed or passed the write timeout
  kTls,                // the TLS handshake or the certificate check failed
  kOther,
};

struct ClientAnswer {
  enum class Outcome {
    kRead,      // the answer was read (any HTTP status); with read_body, the whole body
    kTooLarge,  // the declared or the received body passed max_body_bytes: reading stopped
    kTooSlow,   // the deadline passed while the body came in: reading stopped
    kNotSent,   // no answer: connect, send or read failed (see error)
  };
  Outcome outcome = Outcome::kNotSent;
  // The HTTP status once the status line was read: also set when reading
  // stopped early, and when the connection failed after the status line.
  int status = 0;
  HeaderMap headers;  // set with kRead
  std::string body;   // set with kRead and read_body
  ClientError error = ClientError::kNone;
  std::string error_text;  // kNotSent: the client library's word for it ("Connection", "Read")
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Sends `request` to the client's origin and reads its answer within the
  // bounds above. Never throws; every failure is an Outcome. Safe to retry
  // only where the request is (the callers decide).
  virtual ClientAnswer Send(const ClientRequest& request) = 0;
};

class HttpClientFactory {
 public:
  virtual ~HttpClientFactory() = default;
  // A client for `options.base_url`; no I/O until its first Send. The caller
  // owns it. InvalidArgument when the client library cannot use the URL.
  virtual StatusOr<std::unique_ptr<HttpClient>> NewClient(const HttpClientOptions& options) = 0;
};

// `value` percent-encoded for a query string: ASCII letters, digits and
// -_.!~*'() stay, every other byte is %XX.
std::string EncodeQueryParam(const std::string& value);

// "https://host:port/a/b?c" → {"https://host:port", "/a/b?c"}; no path: "/".
std::pair<std::string, std::string> SplitUrl(const std::string& url);

}  // namespace export_center::http
