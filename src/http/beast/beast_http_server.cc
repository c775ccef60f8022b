#include "http/beast/beast_http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "common/ascii.h"
#include "common/mutex.h"
#include "common/thread_guard.h"
#include "http/connection_limiter.h"
#include "http/request_framing.h"
#include "http/worker_pool.h"

namespace export_center::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
// First read of a keep-alive connection's next request: a small request fits.
constexpr size_t kFirstReadBytes = 4096;
// The most one read adds to the buffer. The buffer's cap is the header limit
// plus this: every read happens only while less than a header (or, in the
// body, a chunk line) is held unparsed.
constexpr size_t kReadBytes = 16 * 1024;
// Idle connections keep their buffer; one that grew for a big request shrinks.
constexpr size_t kKeepBufferBytes = 16 * 1024;
// Lingering close: how much unread input to swallow, and for how long, so the
// peer reads our answer instead of a reset.
constexpr size_t kDrainBytes = 1024 * 1024;
constexpr std::chrono::milliseconds kDrainTime{2000};

class Connection;

// What the server and its connections share. Outlives every connection.
struct ServerCore {
  ServerCore(const HttpServerOptions& o, HttpService* s)
      : options(o), service(s), limiter(o.max_connections, o.max_connections_per_address) {}

  const HttpServerOptions options;
  HttpService* const service;
  WorkerPool* workers = nullptr;
  ConnectionLimiter limiter;
  std::atomic<int64_t> rejected{0}, timed_out{0}, requests{0}, open_streams{0},
      stream_buffer_bytes{0}, live_streams{0};
  Mutex mu;
  std::set<Connection*> connections GUARDED_BY(mu);  // for Stop
};

bool IsTimeout(const beast::error_code& ec) { return ec == beast::error::timeout; }

// Every refusal of what a client sent is a parser error code, ours included:
// a header over its limit or with too many fields 431, a body over the limit
// 413, anything else (malformed, a chunk line over its cap) 400.
int RefusalStatus(const beast::error_code& ec) {
  if (ec == bhttp::error::header_limit) return 431;
  if (ec == bhttp::error::body_limit) return 413;
  return 400;
}

// Beast's chunk-header callback (it keeps a reference, so the connection owns one).
struct ChunkHeaderCheck {
  void operator()(std::uint64_t, beast::string_view extensions, beast::error_code& ec) {
    if (!ChunkExtensionsAreClean({extensions.data(), extensions.size()})) {
      ec = bhttp::error::bad_chunk_extension;
    }
  }
};

// "::ffff:1.2.3.4" → "1.2.3.4", so one client has one spelling on a dual-stack socket.
std::string PeerAddress(const tcp::socket& socket) {
  beast::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "";
  auto address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
  }
  return address.to_string();
}

// Header names the server owns: handlers do not frame the message.
bool IsFramingHeader(std::string_view name) {
  return EqualsIgnoreCaseAscii(name, "Content-Length") ||
         EqualsIgnoreCaseAscii(name, "Connection") ||
         EqualsIgnoreCaseAscii(name, "Transfer-Encoding");
}

// The answering side of one connection: writes the answer to each request
// (a whole body; a streamed body of known length; a live body of chunks until
// its source ends) and owns what a body in flight holds, its serializer,
// source and chunk. Its Connection owns it, reads the requests, and decides
// after each answer whether to read the next one or to close
// (Connection::AfterResponse). Every completion here holds the connection,
// and with it this writer, alive; all of them run on the connection's strand.
class ResponseWriter {
 public:
  ResponseWriter(Connection& connection, beast::tcp_stream& stream, ServerCore* core,
                 const std::string& peer)
      : connection_(connection), stream_(stream), core_(core), peer_(peer) {}

  // From a request's header: the answer's version, whether the connection
  // stays open after it, and whether its body is left out (HEAD).
  void Expect(unsigned version, bool keep_alive, bool head) {
    version_ = version;
    keep_alive_ = keep_alive;
    head_ = head;
  }
  // The answer is the connection's last (a refusal).
  void CloseAfter() { keep_alive_ = false; }
  bool keep_alive() const { return keep_alive_; }

  void Respond(HttpResponse res);
  void WriteWhole(HttpResponse res);
  // Lets go of a streamed or live body: the connection failed or is destroyed.
  void End();
  // Only from Stop, when no I/O thread runs.
  void CloseLive() {
    // A live source must stop waking a connection whose io_context is going away.
    if (live_) live_->Close();
  }

 private:
  const HttpServerOptions& options() const { return core_->options; }
  std::shared_ptr<Connection> Hold() const;
  template <class Body>
  void FillHeader(bhttp::response<Body>& msg, const HttpResponse& res) const;
  // ---- streamed bodies ----
  void StartStream(HttpResponse res);
  void NextChunk();
  void OnChunk(Status status);
  void EndStream();
  // ---- open-ended (live) bodies ----
  void StartLive(HttpResponse res);
  void PollLive();
  void OnLiveWake();
  void WatchPeer();
  void EndLive();

  Connection& connection_;
  beast::tcp_stream& stream_;  // the connection's
  ServerCore* const core_;
  const std::string& peer_;  // the connection's
  unsigned version_ = 11;
  bool keep_alive_ = false;
  bool head_ = false;
  std::optional<bhttp::response<bhttp::string_body>> whole_;
  // A streamed body: its header message, serializer, source and one chunk.
  std::optional<bhttp::response<bhttp::buffer_body>> stream_msg_;
  std::optional<bhttp::response_serializer<bhttp::buffer_body>> serializer_;
  std::shared_ptr<BodySource> source_;
  uint64_t remaining_ = 0;
  std::string chunk_;
  bool streaming_ = false;
  // A live body: its source, and whether we wait for its waker. While waiting
  // the only pending operation is WatchPeer's read, which notices the client
  // leaving and keeps the connection alive.
  std::shared_ptr<LiveSource> live_;
  bool live_waiting_ = false;
  char watch_buffer_[512];
};

// One accepted socket: reads requests one after another (framing, read caps,
// the header and body deadlines), hands each to the workers, has its
// ResponseWriter write the answer, then reads on or closes. All its handlers
// run on its strand.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, ServerCore* core, std::string peer, std::string limit_key)
      : core_(core),
        stream_(std::move(socket)),
        buffer_(core->options.max_header_bytes + kReadBytes),
        peer_(std::move(peer)),
        limit_key_(std::move(limit_key)),
        writer_(*this, stream_, core, peer_) {
    MutexLock lock(&core_->mu);
    core_->connections.insert(this);
  }

  ~Connection() {
    writer_.End();
    core_->limiter.Release(limit_key_);
    MutexLock lock(&core_->mu);
    core_->connections.erase(this);
  }

  void Start() {
    beast::error_code ec;
    // Small answers go out at once instead of waiting for the peer's delayed ACK.
    stream_.socket().set_option(tcp::no_delay(true), ec);
    // Report the socket writable once less than a chunk is left unsent, rather
    // than when half the (auto-grown, up to MiBs) send buffer is free: a slow
    // reader then takes each chunk within the send deadline, and the kernel
    // holds about one chunk per stream instead of megabytes.
    int lowat = static_cast<int>(options().stream_chunk_bytes);
    ::setsockopt(stream_.socket().native_handle(), IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat,
                 sizeof lowat);
    ReadHeader();
  }

  // Only from Stop, when no I/O thread runs.
  void CloseNow() {
    writer_.CloseLive();
    beast::error_code ec;
    stream_.socket().close(ec);
  }

  // ---- how an answer ends (its ResponseWriter calls these) ----
  // Written: the next request, or the close.
  void AfterResponse(beast::error_code ec);
  // Gone, a deadline, or a body cut short: the socket closes now.
  void Fail(beast::error_code ec);

 private:
  const HttpServerOptions& options() const { return core_->options; }

  // ---- reading ----
  void WaitForNextRequest();
  void ReadHeader();
  void ReadBody();
  void Advance();
  bool PhaseDone() const;
  beast::error_code ParseHeld();
  void SkipEmptyLines();
  beast::error_code ScanHeader();
  beast::error_code CheckHeld() const;
  void ReadMore();
  void OnHeader();
  void Refuse(beast::error_code ec);
  void FillHead();
  void Dispatch();
  // ---- closing ----
  void Reject(int status);
  void CloseGracefully();
  void Drain(size_t drained);

  ServerCore* const core_;
  beast::tcp_stream stream_;
  // Every byte read lands here; its max_size is the connection's read cap.
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  ChunkHeaderCheck chunk_check_;
  HeaderScanner scanner_;
  size_t scanned_ = 0;         // buffered header bytes the scanner has seen
  bool reading_body_ = false;  // else the header
  HttpRequest request_;        // the request being read
  const std::string peer_;
  const std::string limit_key_;
  bool drain_on_close_ = false;  // input may be left unread
  // Declared last: it refers to stream_ and peer_.
  ResponseWriter writer_;
};

// ---- reading the requests ---------------------------------------------------

void Connection::WaitForNextRequest() {
  if (buffer_.size() > 0) return ReadHeader();  // a pipelined request is already here
  if (buffer_.capacity() > kKeepBufferBytes) buffer_.shrink_to_fit();
  stream_.expires_after(options().idle_timeout);
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            self->buffer_.commit(n);
                            if (ec) return self->Fail(ec);
                            self->ReadHeader();
                          });
}

void Connection::ReadHeader() {
  request_ = HttpRequest();
  request_.peer_address = peer_;
  parser_.emplace();
  parser_->header_limit(options().max_header_bytes);
  parser_->body_limit(options().max_body_bytes);
  parser_->on_chunk_header(chunk_check_);
  scanner_ = HeaderScanner();
  scanned_ = 0;
  reading_body_ = false;
  // One deadline for the whole header: a client trickling a byte at a time
  // (slowloris) is cut off as surely as a silent one.
  stream_.expires_after(options().header_timeout);
  Advance();
}

void Connection::ReadBody() {
  reading_body_ = true;
  parser_->eager(true);  // parse every chunk the buffer holds, not just one
  stream_.expires_after(options().body_timeout);
  Advance();
}

// Our own read loop rather than http::async_read, so that one check (CheckHeld)
// sees what is buffered between reads: Beast's would let a chunk-size line
// grow the buffer without end. Parses what is held, then goes on to the
// header or the dispatch, to a refusal, or to another read.
void Connection::Advance() {
  beast::error_code ec = ParseHeld();
  if (!ec && !PhaseDone()) ec = CheckHeld();
  if (ec) return Refuse(ec);
  if (!PhaseDone()) return ReadMore();
  if (reading_body_) return Dispatch();
  OnHeader();
}

bool Connection::PhaseDone() const {
  return reading_body_ ? parser_->is_done() : parser_->is_header_done();
}

beast::error_code Connection::ParseHeld() {
  beast::error_code ec;
  if (!reading_body_) {
    SkipEmptyLines();
    if ((ec = ScanHeader())) return ec;
  }
  while (buffer_.size() > 0 && !PhaseDone()) {
    size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    scanned_ -= std::min(scanned_, used);
    if (ec == bhttp::error::need_more) return {};
    if (ec || used == 0) return ec;
  }
  return {};
}

// RFC 9112 §2.2: empty lines before a request line are ignored (some clients
// send a CRLF after a body).
void Connection::SkipEmptyLines() {
  while (scanned_ == 0 && !parser_->got_some() && buffer_.size() >= 2) {
    auto held = static_cast<const char*>(buffer_.data().data());
    if (held[0] != '\r' || held[1] != '\n') return;
    buffer_.consume(2);
  }
}

// Runs before the parser sees a header byte: fields are counted before Beast
// stores them, and a folded line is refused instead of unfolded.
beast::error_code Connection::ScanHeader() {
  std::string_view held(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  size_t used = 0;
  HeaderScanner::Verdict verdict = scanner_.Scan(held.substr(scanned_), &used);
  scanned_ += used;
  if (verdict == HeaderScanner::Verdict::kFolded) return bhttp::error::bad_field;
  if (verdict == HeaderScanner::Verdict::kTooManyFields) return bhttp::error::header_limit;
  return {};
}

// The one cap on what a connection holds while its parser wants more: in the
// header, less than the header limit (Beast checks that too); in the body,
// whose data the parser takes as it comes, what is held is a chunk-size line
// with its extensions or the trailer section, capped at kMaxChunkFramingBytes.
beast::error_code Connection::CheckHeld() const {
  if (!reading_body_) {
    if (buffer_.size() >= options().max_header_bytes) return bhttp::error::header_limit;
  } else if (buffer_.size() >= kMaxChunkFramingBytes) {
    return bhttp::error::buffer_overflow;
  }
  return {};
}

void Connection::ReadMore() {
  // Never past the buffer's max_size. CheckHeld leaves at least kReadBytes of
  // room; should it not, the cap still holds and the request is refused.
  size_t room = std::min(kReadBytes, buffer_.max_size() - buffer_.size());
  if (room == 0) return Refuse(bhttp::error::buffer_overflow);
  size_t want = std::min(room, std::max(kFirstReadBytes, buffer_.capacity() - buffer_.size()));
  stream_.async_read_some(buffer_.prepare(want),
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            self->buffer_.commit(n);
                            if (ec) return self->Fail(ec);  // gone, or a deadline
                            self->Advance();
                          });
}

void Connection::OnHeader() {
  FillHead();
  if (int status = FramingRefusal(request_, parser_->get().version(), parser_->chunked()))
    return Reject(status);
  if (!NormalizeTarget(&request_)) return Reject(400);
  if (parser_->is_done()) return Dispatch();
  const auto& expect = parser_->get()[bhttp::field::expect];
  if (EqualsIgnoreCaseAscii(expect, "100-continue")) {
    stream_.expires_after(options().send_timeout);
    return asio::async_write(stream_, asio::buffer(kContinue, sizeof kContinue - 1),
                             [self = shared_from_this()](beast::error_code ec, size_t) {
                               if (ec) return self->Fail(ec);
                               self->ReadBody();
                             });
  }
  ReadBody();
}

// A body over the limit is known from the header before it is done; the
// request is then logged with what was parsed.
void Connection::Refuse(beast::error_code ec) {
  if (!reading_body_ && ec == bhttp::error::body_limit) FillHead();
  Reject(RefusalStatus(ec));
}

void Connection::FillHead() {
  const auto& m = parser_->get();
  request_.method = std::string(m.method_string());
  request_.target = std::string(m.target());
  ParseTarget(request_.target, &request_.path, &request_.query);
  for (const auto& field : m) {
    request_.headers.Add(std::string(field.name_string()), std::string(field.value()));
  }
  writer_.Expect(m.version(), m.keep_alive(), m.method() == bhttp::verb::head);
}

void Connection::Dispatch() {
  stream_.expires_never();  // the handler's time is not the client's fault
  request_.body = std::move(parser_->get().body());
  parser_.reset();
  ++core_->requests;
  core_->workers->Post([self = shared_from_this(), request = std::move(request_)]() mutable {
    HttpResponse res;
    try {
      res = self->core_->service->Handle(request);
    } catch (const std::exception& e) {
      spdlog::error("http handler for {} {} threw: {}", request.method, request.path, e.what());
      res = self->core_->service->Reject(request, 500);
    }
    asio::post(self->stream_.get_executor(),
               [self, res = std::move(res)]() mutable { self->writer_.Respond(std::move(res)); });
  });
}

// ---- after an answer: reading on, or closing -------------------------------

void Connection::AfterResponse(beast::error_code ec) {
  if (ec) return Fail(ec);
  if (!writer_.keep_alive()) return CloseGracefully();
  WaitForNextRequest();
}

void Connection::Reject(int status) {
  writer_.CloseAfter();
  drain_on_close_ = true;
  writer_.WriteWhole(core_->service->Reject(request_, status));
}

void Connection::Fail(beast::error_code ec) {
  if (IsTimeout(ec)) ++core_->timed_out;
  writer_.End();
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
}

// FIN after the answer; unread input is swallowed for a moment first, since
// closing a socket with unread bytes sends a reset that can destroy the answer
// before the client has read it.
void Connection::CloseGracefully() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  // Pipelined bytes we will not answer count as unread input too.
  if (!drain_on_close_ && buffer_.size() == 0) return stream_.close();
  stream_.expires_after(kDrainTime);
  Drain(0);
}

void Connection::Drain(size_t drained) {
  buffer_.consume(buffer_.size());
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          [self = shared_from_this(), drained](beast::error_code ec, size_t n) {
                            if (ec || drained + n > kDrainBytes) return self->stream_.close();
                            self->Drain(drained + n);
                          });
}

// ---- writing the answers ----------------------------------------------------

// What every completion captures: the connection owns this writer.
std::shared_ptr<Connection> ResponseWriter::Hold() const { return connection_.shared_from_this(); }

void ResponseWriter::Respond(HttpResponse res) {
  if (res.live) {
    if (!head_) return StartLive(std::move(res));
    res.live->Close();
    res.live.reset();
  }
  if (res.stream && !head_) return StartStream(std::move(res));
  WriteWhole(std::move(res));
}

template <class Body>
void ResponseWriter::FillHeader(bhttp::response<Body>& msg, const HttpResponse& res) const {
  msg.version(version_);
  msg.result(static_cast<unsigned>(res.status));
  for (const auto& [name, value] : res.headers.fields()) {
    // A CR or LF would let a value start a header of its own.
    if (IsFramingHeader(name) || value.find_first_of("\r\n") != std::string::npos) continue;
    msg.insert(name, value);
  }
  msg.keep_alive(keep_alive_);
}

void ResponseWriter::WriteWhole(HttpResponse res) {
  whole_.emplace();
  FillHeader(*whole_, res);
  if (head_) {
    whole_->content_length(res.stream ? res.stream_length : res.body.size());
  } else {
    whole_->body() = std::move(res.body);
    whole_->prepare_payload();
  }
  stream_.expires_after(options().send_timeout);
  bhttp::async_write(stream_, *whole_, [this, self = Hold()](beast::error_code ec, size_t) {
    whole_.reset();
    self->AfterResponse(ec);
  });
}

void ResponseWriter::End() {
  EndStream();
  EndLive();
}

void ResponseWriter::StartStream(HttpResponse res) {
  source_ = std::move(res.stream);
  remaining_ = res.stream_length;
  stream_msg_.emplace();
  FillHeader(*stream_msg_, res);
  stream_msg_->content_length(remaining_);
  stream_msg_->body().data = nullptr;
  stream_msg_->body().more = true;
  serializer_.emplace(*stream_msg_);
  chunk_.reserve(
      std::min<uint64_t>(options().stream_chunk_bytes, std::max<uint64_t>(remaining_, 1)));
  streaming_ = true;
  ++core_->open_streams;
  core_->stream_buffer_bytes += static_cast<int64_t>(chunk_.capacity());
  stream_.expires_after(options().send_timeout);
  bhttp::async_write_header(stream_, *serializer_,
                            [this, self = Hold()](beast::error_code ec, size_t) {
                              if (ec) return self->Fail(ec);
                              NextChunk();
                            });
}

// Back-pressure: the next chunk is read only once the previous one is written.
void ResponseWriter::NextChunk() {
  if (remaining_ == 0) {
    stream_msg_->body().data = nullptr;
    stream_msg_->body().size = 0;
    stream_msg_->body().more = false;
    stream_.expires_after(options().send_timeout);
    return bhttp::async_write(stream_, *serializer_,
                              [this, self = Hold()](beast::error_code ec, size_t) {
                                EndStream();
                                self->AfterResponse(ec);
                              });
  }
  size_t want = static_cast<size_t>(std::min<uint64_t>(options().stream_chunk_bytes, remaining_));
  core_->workers->Post([this, self = Hold(), want] {
    chunk_.clear();
    Status status = source_->Next(want, &chunk_);
    asio::post(stream_.get_executor(), [this, self, status] { OnChunk(status); });
  });
}

void ResponseWriter::OnChunk(Status status) {
  if (!status.ok() || chunk_.empty()) {
    // Content-Length was promised: closing tells the client the body is short.
    spdlog::error("http stream to {} stopped with {} bytes unsent: {}", peer_, remaining_,
                  status.ok() ? "the source ended early" : status.ToString());
    return connection_.Fail(beast::error_code());
  }
  if (chunk_.size() > remaining_) chunk_.resize(static_cast<size_t>(remaining_));
  remaining_ -= chunk_.size();
  stream_msg_->body().data = chunk_.data();
  stream_msg_->body().size = chunk_.size();
  stream_msg_->body().more = remaining_ > 0;
  stream_.expires_after(options().send_timeout);
  bhttp::async_write(stream_, *serializer_, [this, self = Hold()](beast::error_code ec, size_t) {
    if (ec == bhttp::error::need_buffer) ec = {};  // chunk written, want more
    if (ec) return self->Fail(ec);
    if (remaining_ > 0) return NextChunk();
    EndStream();
    self->AfterResponse(ec);
  });
}

void ResponseWriter::EndStream() {
  if (!streaming_) return;
  streaming_ = false;
  --core_->open_streams;
  core_->stream_buffer_bytes -= static_cast<int64_t>(chunk_.capacity());
  std::string().swap(chunk_);
  serializer_.reset();
  stream_msg_.reset();
  source_.reset();
}

// A live body is written as chunks of whatever the source has ready. The
// connection closes when it ends: there is no next request on it.
void ResponseWriter::StartLive(HttpResponse res) {
  live_ = std::move(res.live);
  keep_alive_ = false;
  stream_msg_.emplace();
  FillHeader(*stream_msg_, res);
  stream_msg_->chunked(true);
  stream_msg_->body().data = nullptr;
  stream_msg_->body().more = true;
  serializer_.emplace(*stream_msg_);
  ++core_->live_streams;
  std::weak_ptr<Connection> weak = connection_.weak_from_this();
  live_->SetWaker([this, weak] {
    // The posted handler holds the connection until it runs on the strand;
    // `this` is touched only while the connection is held.
    if (auto self = weak.lock()) {
      asio::post(stream_.get_executor(), [this, self] { OnLiveWake(); });
    }
  });
  stream_.expires_after(options().send_timeout);
  bhttp::async_write_header(stream_, *serializer_,
                            [this, self = Hold()](beast::error_code ec, size_t) {
                              if (ec) return self->Fail(ec);
                              WatchPeer();
                              PollLive();
                            });
}

// Runs on the strand: after the header, after each chunk, and on a wake.
void ResponseWriter::PollLive() {
  if (!live_) return;
  chunk_.clear();
  LiveSource::PollResult result = live_->Poll(options().stream_chunk_bytes, &chunk_);
  auto& body = stream_msg_->body();
  if (result == LiveSource::PollResult::kEnd) {
    body.data = nullptr;
    body.size = 0;
    body.more = false;
    stream_.expires_after(options().send_timeout);
    return bhttp::async_write(stream_, *serializer_,
                              [this, self = Hold()](beast::error_code ec, size_t) {
                                EndLive();
                                self->AfterResponse(ec);
                              });
  }
  if (chunk_.empty()) {
    live_waiting_ = true;
    stream_.expires_never();  // waiting for events is nobody's fault
    return;
  }
  body.data = chunk_.data();
  body.size = chunk_.size();
  body.more = true;
  stream_.expires_after(options().send_timeout);
  bhttp::async_write(stream_, *serializer_, [this, self = Hold()](beast::error_code ec, size_t) {
    if (ec == bhttp::error::need_buffer) ec = {};  // chunk written
    if (ec) return self->Fail(ec);
    PollLive();
  });
}

// A wake that arrives while a chunk is being written is not lost: the write's
// completion polls again anyway.
void ResponseWriter::OnLiveWake() {
  if (!live_ || !live_waiting_) return;
  live_waiting_ = false;
  PollLive();
}

// Reads the socket directly (outside the stream's deadline, which would
// otherwise cut a quiet stream) to notice the client closing it. A client
// has nothing to send on a live stream; what it sends is dropped.
void ResponseWriter::WatchPeer() {
  stream_.socket().async_read_some(asio::buffer(watch_buffer_),
                                   [this, self = Hold()](beast::error_code ec, size_t) {
                                     if (!live_) return;
                                     if (ec) return self->Fail(ec);
                                     WatchPeer();
                                   });
}

void ResponseWriter::EndLive() {
  if (!live_) return;
  live_->Close();
  live_.reset();
  live_waiting_ = false;
  --core_->live_streams;
  // The serializer, its message and the chunk stay until the connection is
  // destroyed: EndLive also runs from Fail (WatchPeer saw the client leave)
  // while a chunk's write may still be in flight, and that write's completion
  // consumes from the serializer (found by http_api_fuzzer: Beast's variant
  // assertion). A live connection is closed after its stream, so nothing
  // reuses them.
}

// ---- the server ------------------------------------------------------------

class BeastHttpServer final : public HttpServer {
 public:
  BeastHttpServer(const HttpServerOptions& options, HttpService* service)
      : core_(options, service),
        io_(std::max(1, options.io_threads)),
        workers_(std::max(1, options.worker_threads)),
        acceptor_(io_),
        backoff_(io_) {
    core_.workers = &workers_;
  }
  ~BeastHttpServer() override { Stop(); }

  Status Start() override;
  void Stop() override;
  int port() const override { return port_; }
  HttpServerStats stats() const override;

 private:
  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket socket);
  void RefuseOverCap(tcp::socket socket, const std::string& peer);

  // Destroyed last to first: connections still queued in workers_ or io_ go
  // before the core they point to.
  ServerCore core_;
  asio::io_context io_;
  WorkerPool workers_;
  tcp::acceptor acceptor_;
  asio::steady_timer backoff_;
  std::vector<std::thread> io_threads_;
  int port_ = 0;
  bool stopped_ = false;
};

Status BeastHttpServer::Start() {
  const HttpServerOptions& o = core_.options;
  beast::error_code ec;
  tcp::resolver resolver(io_);
  auto results = resolver.resolve(o.host, std::to_string(o.port), tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Unavailable("cannot resolve server.host " + o.host + ": " + ec.message());
  }
  tcp::endpoint endpoint = results.begin()->endpoint();
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " +
                       ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  Accept();
  for (int i = 0; i < std::max(1, o.io_threads); ++i) {
    io_threads_.push_back(StartGuardedThread("http_io", [this] { io_.run(); }));
  }
  return Status::Ok();
}

void BeastHttpServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  io_.stop();
  for (auto& t : io_threads_) t.join();
  io_threads_.clear();
  workers_.Stop();  // waits for running handlers
  beast::error_code ignored;
  acceptor_.close(ignored);
  // Nothing runs now: close every socket so clients see the end at once.
  MutexLock lock(&core_.mu);
  for (Connection* c : core_.connections) c->CloseNow();
}

HttpServerStats BeastHttpServer::stats() const {
  HttpServerStats s;
  s.open_connections = core_.limiter.open();
  s.rejected_connections = core_.rejected;
  s.timed_out_connections = core_.timed_out;
  s.requests = core_.requests;
  s.open_streams = core_.open_streams;
  s.stream_buffer_bytes = core_.stream_buffer_bytes;
  s.live_streams = core_.live_streams;
  return s;
}

void BeastHttpServer::Accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket s) {
    OnAccept(ec, std::move(s));
  });
}

void BeastHttpServer::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted) return;
  if (ec) {
    // Out of file descriptors and the like: pause instead of spinning.
    spdlog::warn("http accept failed: {}", ec.message());
    backoff_.expires_after(std::chrono::milliseconds(100));
    backoff_.async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec) Accept();
    });
    return;
  }
  std::string peer = PeerAddress(socket);
  std::string key = ConnectionLimiter::KeyOf(peer);
  if (!core_.limiter.TryAcquire(key)) {
    RefuseOverCap(std::move(socket), peer);
  } else {
    std::make_shared<Connection>(std::move(socket), &core_, std::move(peer), std::move(key))
        ->Start();
  }
  Accept();
}

// Over a cap: a short 503 and a clean close (FIN), without taking a slot or a
// thread. Bytes the client already sent are read away so the close is no reset.
void BeastHttpServer::RefuseOverCap(tcp::socket socket, const std::string& peer) {
  ++core_.rejected;
  HttpRequest head;
  head.peer_address = peer;
  HttpResponse res = core_.service->Reject(head, 503);
  std::string text = "HTTP/1.1 " + std::to_string(res.status) + " " +
                     std::string(bhttp::obsolete_reason(bhttp::int_to_status(res.status))) + "\r\n";
  for (const auto& [name, value] : res.headers.fields()) {
    if (IsFramingHeader(name) || value.find_first_of("\r\n") != std::string::npos) continue;
    text += name + ": " + value + "\r\n";
  }
  text += "Content-Length: " + std::to_string(res.body.size()) + "\r\nConnection: close\r\n\r\n";
  text += res.body;
  beast::error_code ec;
  socket.non_blocking(true, ec);
  char scratch[4096];
  for (int i = 0; i < 16 && !ec; ++i) socket.read_some(asio::buffer(scratch), ec);
  socket.write_some(asio::buffer(text), ec);  // fits the socket buffer of a new connection
  socket.shutdown(tcp::socket::shutdown_send, ec);
  socket.close(ec);
}

}  // namespace

std::unique_ptr<HttpServer> NewBeastHttpServer(const HttpServerOptions& options,
                                               HttpService* service) {
  return std::make_unique<BeastHttpServer>(options, service);
}

}  // namespace export_center::http
