// The Beast server over real loopback sockets: deadlines, connection caps,
// back-pressure on streamed bodies, and the HTTP edge cases the API relies on.
// A small HttpService stands in for the API.

#include "http/beast/beast_http_server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/raw_connection.h"

namespace export_center::http {
namespace {

using namespace std::chrono_literals;
using testing::BodyOf;
using testing::RawConnection;
using testing::StatusOf;
using End = RawConnection::End;
using Clock = std::chrono::steady_clock;

// Bytes 'a'..'z' repeating, so a reader can check every byte's position.
char PatternAt(uint64_t i) { return static_cast<char>('a' + i % 26); }

class PatternSource : public BodySource {
 public:
  PatternSource(uint64_t size, std::atomic<uint64_t>* read) : size_(size), read_(read) {}
  Status Next(size_t max_bytes, std::string* out) override {
    uint64_t n = std::min<uint64_t>(max_bytes, size_ - next_);
    for (uint64_t i = 0; i < n; ++i) out->push_back(PatternAt(next_ + i));
    next_ += n;
    *read_ += n;
    if (fail_at_ != 0 && next_ >= fail_at_) return Internal("disk on fire");
    return Status::Ok();
  }
  uint64_t fail_at_ = 0;

 private:
  const uint64_t size_;
  uint64_t next_ = 0;
  std::atomic<uint64_t>* read_;
};

// A LiveSource the test feeds by hand: Push wakes the connection, Finish ends the body.
class TestLiveSource : public LiveSource {
 public:
  void Push(const std::string& text, bool finish = false) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ += text;
    finished_ = finished_ || finish;
    if (waker_) waker_();
  }
  PollResult Poll(size_t max_bytes, std::string* out) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) return finished_ ? PollResult::kEnd : PollResult::kReady;
    *out = pending_.substr(0, max_bytes);
    pending_.erase(0, out->size());
    return PollResult::kReady;
  }
  void SetWaker(std::function<void()> wake) override {
    std::lock_guard<std::mutex> lock(mu_);
    waker_ = std::move(wake);
  }
  void Close() override {
    std::lock_guard<std::mutex> lock(mu_);
    waker_ = nullptr;
    closed = true;
  }
  std::atomic<bool> closed{false};

 private:
  std::mutex mu_;
  std::string pending_;
  bool finished_ = false;
  std::function<void()> waker_;
};

class TestService : public HttpService {
 public:
  HttpResponse Handle(HttpRequest& req) override {
    HttpResponse res;
    if (req.path == "/hello") {
      res.SetContent("hello", "text/plain");
    } else if (req.path == "/echo") {
      res.SetContent(req.method + " " + req.body + " q=" + req.Query("q"), "text/plain");
    } else if (req.path == "/sleep") {
      std::this_thread::sleep_for(300ms);
      res.SetContent("slept", "text/plain");
    } else if (req.path == "/stream" || req.path == "/broken-stream") {
      uint64_t size = std::stoull(req.Query("size"));
      auto source = std::make_shared<PatternSource>(size, &stream_read);
      if (req.path == "/broken-stream") source->fail_at_ = size / 2;
      res.SetStream(source, size, "application/octet-stream");
    } else if (req.path == "/live") {
      auto source = std::make_shared<TestLiveSource>();
      {
        std::lock_guard<std::mutex> lock(live_mu);
        live.push_back(source);
      }
      res.SetLive(source, "text/event-stream");
    } else if (req.path == "/throw") {
      throw std::runtime_error("handler bug");
    } else {
      res.status = 404;
      res.SetContent("none", "text/plain");
    }
    return res;
  }
  HttpResponse Reject(const HttpRequest&, int status) override {
    HttpResponse res;
    res.status = status;
    res.SetContent("rejected " + std::to_string(status), "text/plain");
    return res;
  }
  std::atomic<uint64_t> stream_read{0};
  std::mutex live_mu;
  std::vector<std::shared_ptr<TestLiveSource>> live;  // every live body handed out
};

std::string Get(const std::string& path, bool close = false) {
  return "GET " + path + " HTTP/1.1\r\nHost: t\r\n" + (close ? "Connection: close\r\n" : "") +
         "\r\n";
}

class BeastHttpServerTest : public ::testing::Test {
 protected:
  // Short deadlines so that the tests that wait for them are quick.
  static HttpServerOptions Fast() {
    HttpServerOptions o;
    o.worker_threads = 2;
    o.header_timeout = 300ms;
    o.body_timeout = 300ms;
    o.idle_timeout = 400ms;
    o.send_timeout = 2000ms;
    return o;
  }

  void Start(HttpServerOptions options) {
    server_ = NewBeastHttpServer(options, &service_);
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::unique_ptr<RawConnection> Connect(const std::string& source_ip = "", int rcvbuf = 0) {
    auto c = RawConnection::Open(port_, source_ip, rcvbuf);
    EXPECT_NE(c, nullptr);
    return c;
  }

  // One request on a fresh connection; the raw response.
  std::string Fetch(const std::string& request, const std::string& source_ip = "") {
    auto c = Connect(source_ip);
    if (!c || !c->Send(request)) return "";
    return c->ReadResponse(2s);
  }

  // Waits until the server counts `n` open connections (closing is asynchronous).
  bool WaitForOpen(int64_t n) {
    for (auto end = Clock::now() + 2s; Clock::now() < end; std::this_thread::sleep_for(5ms)) {
      if (server_->stats().open_connections == n) return true;
    }
    return false;
  }

  TestService service_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

// ---- basics ------------------------------------------------------------------

TEST_F(BeastHttpServerTest, AnswersAndKeepsTheConnection) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send(Get("/echo?q=a%20b+c")));
  std::string r = c->ReadResponse(2s);
  EXPECT_EQ(StatusOf(r), 200) << r;
  EXPECT_EQ(BodyOf(r), "GET  q=a b c");
  EXPECT_NE(r.find("Content-Type: text/plain"), std::string::npos);
  ASSERT_TRUE(c->Send(Get("/hello")));
  EXPECT_EQ(BodyOf(c->ReadResponse(2s)), "hello");
}

TEST_F(BeastHttpServerTest, KeepAliveSecondRequestIsFast) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send(Get("/hello")));
  ASSERT_EQ(BodyOf(c->ReadResponse(2s)), "hello");
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) {
    auto start = Clock::now();
    ASSERT_TRUE(c->Send(Get("/hello")));
    ASSERT_EQ(BodyOf(c->ReadResponse(2s)), "hello");
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  EXPECT_LT(ms[ms.size() / 2], 5.0) << "median keep-alive request took " << ms[ms.size() / 2];
}

TEST_F(BeastHttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send(Get("/echo?q=1") + Get("/echo?q=2")));
  EXPECT_EQ(BodyOf(c->ReadResponse(2s)), "GET  q=1");
  EXPECT_EQ(BodyOf(c->ReadResponse(2s)), "GET  q=2");
}

TEST_F(BeastHttpServerTest, BodyAndExpectContinue) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(
      c->Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
              "Expect: 100-continue\r\n\r\n"));
  std::string cont = c->ReadResponse(2s);
  EXPECT_EQ(StatusOf(cont), 100) << cont;
  ASSERT_TRUE(c->Send("hello"));
  EXPECT_EQ(BodyOf(c->ReadResponse(2s)), "POST hello q=");
  // Chunked request bodies are read too.
  ASSERT_TRUE(
      c->Send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
              "3\r\nabc\r\n0\r\n\r\n"));
  EXPECT_EQ(BodyOf(c->ReadResponse(2s)), "POST abc q=");
}

TEST_F(BeastHttpServerTest, HeadGetsTheLengthButNoBody) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send("HEAD /stream?size=1000 HTTP/1.1\r\nHost: t\r\n\r\n"));
  // ReadResponse would wait for 1000 body bytes; the next answer proves there were none.
  ASSERT_TRUE(c->Send(Get("/hello", /*close=*/true)));
  std::string all;
  EXPECT_EQ(c->WaitForClose(2s, &all), End::kEof);
  EXPECT_EQ(all.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << all;
  EXPECT_NE(all.find("Content-Length: 1000\r\n"), std::string::npos) << all;
  size_t second = all.find("HTTP/1.1 200", 5);
  ASSERT_NE(second, std::string::npos) << all;
  EXPECT_EQ(all.find("\r\n\r\n") + 4, second);  // the first answer ends with its header
  EXPECT_EQ(BodyOf(all.substr(second)), "hello");
  EXPECT_EQ(service_.stream_read.load(), 0u);
}

TEST_F(BeastHttpServerTest, ConnectionCloseIsAFin) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send(Get("/hello", /*close=*/true)));
  std::string all;
  EXPECT_EQ(c->WaitForClose(2s, &all), End::kEof);
  EXPECT_EQ(BodyOf(all), "hello");
}

TEST_F(BeastHttpServerTest, ServerRefusalsGoThroughReject) {
  HttpServerOptions o = Fast();
  o.max_body_bytes = 1024;
  o.max_header_bytes = 2048;
  Start(o);
  std::string big =
      Fetch("GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(4096, 'x') + "\r\n\r\n");
  EXPECT_EQ(StatusOf(big), 431) << big;
  EXPECT_EQ(BodyOf(big), "rejected 431");
  EXPECT_EQ(StatusOf(Fetch("BLAH\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Fetch("GET /throw HTTP/1.1\r\nHost: t\r\n\r\n")), 500);

  // A body over the limit is refused from its header; the unread rest is
  // swallowed so the client reads the 413 instead of a reset.
  auto c = Connect();
  ASSERT_TRUE(c->Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 200000\r\n\r\n" +
                      std::string(200000, 'b')));
  std::string all;
  EXPECT_EQ(c->WaitForClose(3s, &all), End::kEof);
  EXPECT_EQ(StatusOf(all), 413) << all.substr(0, 200);
  EXPECT_EQ(BodyOf(all), "rejected 413");
  // The same for a chunked body that grows past the limit.
  auto chunked = Connect();
  ASSERT_TRUE(
      chunked->Send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "800\r\n" +
                    std::string(2048, 'c') + "\r\n0\r\n\r\n"));
  EXPECT_EQ(StatusOf(chunked->ReadResponse(2s)), 413);
}

// ---- deadlines -----------------------------------------------------------------

TEST_F(BeastHttpServerTest, HalfSentRequestIsClosedAtTheHeaderDeadline) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send("GET /hello HTTP/1.1\r\nHo"));
  auto start = Clock::now();
  EXPECT_EQ(c->WaitForClose(5s), End::kEof);
  auto waited = Clock::now() - start;
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 2s);
  // The stream's timer closes the socket first; the connection counts the
  // timeout when its read then completes, a moment after the client saw EOF.
  const auto counted_by = Clock::now() + 2s;
  while (server_->stats().timed_out_connections < 1 && Clock::now() < counted_by) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_GE(server_->stats().timed_out_connections, 1);
}

TEST_F(BeastHttpServerTest, TricklingHeaderIsClosedAtTheHeaderDeadline) {
  Start(Fast());
  auto c = Connect();
  const std::string request = Get("/hello");
  auto start = Clock::now();
  // One byte every 50 ms would take over a second; the deadline is not renewed per byte.
  bool sent_all = true;
  for (char ch : request) {
    if (!c->Send(std::string(1, ch))) {
      sent_all = false;
      break;
    }
    std::this_thread::sleep_for(50ms);
    if (Clock::now() - start > 1500ms) break;
  }
  std::string seen;
  End end = sent_all ? c->WaitForClose(2s, &seen) : End::kEof;
  EXPECT_NE(end, End::kTimeout);
  EXPECT_EQ(seen.find("hello"), std::string::npos);
  EXPECT_LT(Clock::now() - start, 2500ms);
}

TEST_F(BeastHttpServerTest, SilentAndIdleConnectionsAreClosed) {
  Start(Fast());
  auto silent = Connect();
  auto idle = Connect();
  ASSERT_TRUE(idle->Send(Get("/hello")));
  ASSERT_EQ(BodyOf(idle->ReadResponse(2s)), "hello");
  auto start = Clock::now();
  EXPECT_EQ(silent->WaitForClose(3s), End::kEof);  // header deadline: 300 ms
  EXPECT_EQ(idle->WaitForClose(3s), End::kEof);    // keep-alive idle: 400 ms
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST_F(BeastHttpServerTest, SlowBodyIsClosedAtTheBodyDeadline) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly ten.."));
  auto start = Clock::now();
  EXPECT_EQ(c->WaitForClose(3s), End::kEof);
  EXPECT_GE(Clock::now() - start, 250ms);
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST_F(BeastHttpServerTest, IdleAndHalfSentConnectionsDoNotStarveTheServer) {
  HttpServerOptions o;  // production deadlines: the waiting connections stay
  o.worker_threads = 2;
  Start(o);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 64; ++i) held.push_back(Connect("127.0.0.2"));
  for (int i = 0; i < 64; ++i) {
    held.push_back(Connect("127.0.0.3"));
    ASSERT_TRUE(held.back()->Send("GET /hello HTTP/1.1\r\nHos"));
  }
  ASSERT_TRUE(WaitForOpen(128));
  auto start = Clock::now();
  EXPECT_EQ(BodyOf(Fetch(Get("/hello"))), "hello");
  EXPECT_LT(Clock::now() - start, 1s);
}

// ---- connection caps -------------------------------------------------------------

TEST_F(BeastHttpServerTest, PerAddressCapAnswersTheExcessWithACleanClose) {
  HttpServerOptions o;
  o.max_connections_per_address = 4;
  Start(o);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) held.push_back(Connect("127.0.0.5"));
  ASSERT_TRUE(WaitForOpen(4));
  auto excess = Connect("127.0.0.5");
  std::string seen;
  EXPECT_EQ(excess->WaitForClose(2s, &seen), End::kEof);  // FIN, not a reset
  EXPECT_EQ(StatusOf(seen), 503) << seen;
  EXPECT_EQ(BodyOf(seen), "rejected 503");
  EXPECT_EQ(server_->stats().rejected_connections, 1);
  // Other addresses are not affected, and a freed slot can be taken again.
  EXPECT_EQ(BodyOf(Fetch(Get("/hello"), "127.0.0.6")), "hello");
  held.pop_back();
  ASSERT_TRUE(WaitForOpen(3));
  EXPECT_EQ(BodyOf(Fetch(Get("/hello"), "127.0.0.5")), "hello");
}

TEST_F(BeastHttpServerTest, TotalCapHoldsAcrossAddresses) {
  HttpServerOptions o;
  o.max_connections = 6;
  o.max_connections_per_address = 4;
  Start(o);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) held.push_back(Connect("127.0.0.7"));
  for (int i = 0; i < 3; ++i) held.push_back(Connect("127.0.0.8"));
  ASSERT_TRUE(WaitForOpen(6));
  std::string seen;
  EXPECT_EQ(Connect("127.0.0.9")->WaitForClose(2s, &seen), End::kEof);
  EXPECT_EQ(StatusOf(seen), 503);
}

// ---- streamed bodies ---------------------------------------------------------------

TEST_F(BeastHttpServerTest, SlowReaderCostsOneChunkAndNoWorker) {
  HttpServerOptions o;
  o.worker_threads = 1;  // a download holding the worker would block everyone
  Start(o);
  constexpr uint64_t kSize = 32 * 1024 * 1024;
  auto slow = Connect("", /*rcvbuf=*/4096);
  ASSERT_TRUE(slow->Send(Get("/stream?size=" + std::to_string(kSize), /*close=*/true)));
  std::this_thread::sleep_for(300ms);  // let the socket buffers fill

  auto start = Clock::now();
  EXPECT_EQ(BodyOf(Fetch(Get("/hello"))), "hello");
  EXPECT_LT(Clock::now() - start, 1s);
  HttpServerStats s = server_->stats();
  EXPECT_EQ(s.open_streams, 1);
  EXPECT_LE(s.stream_buffer_bytes, 64 * 1024);
  // Back-pressure: only what the socket buffers hold has been read.
  uint64_t read_while_stalled = service_.stream_read.load();
  EXPECT_LT(read_while_stalled, 8u * 1024 * 1024) << read_while_stalled;

  std::string all;
  EXPECT_EQ(slow->WaitForClose(20s, &all), End::kEof);
  std::string body = BodyOf(all);
  ASSERT_EQ(body.size(), kSize);
  for (uint64_t i = 0; i < kSize; i += 4099) ASSERT_EQ(body[i], PatternAt(i)) << i;
  EXPECT_EQ(body.back(), PatternAt(kSize - 1));
  ASSERT_TRUE(WaitForOpen(0));
  EXPECT_EQ(server_->stats().open_streams, 0);
  EXPECT_EQ(server_->stats().stream_buffer_bytes, 0);
}

TEST_F(BeastHttpServerTest, StreamsBackToBackOnOneConnection) {
  Start(Fast());
  auto c = Connect();
  for (uint64_t size : {0u, 1u, 65536u, 200001u}) {
    ASSERT_TRUE(c->Send(Get("/stream?size=" + std::to_string(size))));
    std::string body = BodyOf(c->ReadResponse(5s));
    ASSERT_EQ(body.size(), size);
    for (uint64_t i = 0; i < size; ++i) ASSERT_EQ(body[i], PatternAt(i));
  }
}

TEST_F(BeastHttpServerTest, FailingSourceCutsTheResponseShort) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send(Get("/broken-stream?size=1000000")));
  std::string all;
  EXPECT_NE(c->WaitForClose(5s, &all), End::kTimeout);
  EXPECT_EQ(StatusOf(all), 200);
  EXPECT_LT(BodyOf(all).size(), 1000000u);
  ASSERT_TRUE(WaitForOpen(0));
  EXPECT_EQ(server_->stats().stream_buffer_bytes, 0);
}

// ---- shutdown --------------------------------------------------------------------

TEST_F(BeastHttpServerTest, StopClosesConnectionsAndWaitsForHandlers) {
  HttpServerOptions o;
  Start(o);
  auto idle = Connect();
  auto busy = Connect();
  ASSERT_TRUE(busy->Send(Get("/sleep")));
  std::this_thread::sleep_for(50ms);
  server_->Stop();
  EXPECT_NE(idle->WaitForClose(1s), End::kTimeout);
  EXPECT_NE(busy->WaitForClose(1s), End::kTimeout);
  server_->Stop();  // idempotent
}

// ---- live (open-ended) bodies ------------------------------------------------------

TEST_F(BeastHttpServerTest, LiveBodyIsChunkedWrittenOnWakeAndEnds) {
  Start(Fast());
  auto c = Connect();
  ASSERT_TRUE(c->Send(Get("/live")));
  std::shared_ptr<TestLiveSource> source;
  for (auto end = Clock::now() + 2s; !source && Clock::now() < end;) {
    std::this_thread::sleep_for(5ms);
    std::lock_guard<std::mutex> lock(service_.live_mu);
    if (!service_.live.empty()) source = service_.live[0];
  }
  ASSERT_NE(source, nullptr);
  // Quiet for longer than every deadline: a waiting live body is not cut off.
  std::this_thread::sleep_for(700ms);
  source->Push("data: one\n\n");
  source->Push("data: two\n\n", /*finish=*/true);
  std::string seen;
  EXPECT_EQ(c->WaitForClose(2s, &seen), End::kEof);
  EXPECT_NE(seen.find("Transfer-Encoding: chunked"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("Content-Length"), std::string::npos) << seen;
  EXPECT_NE(seen.find("data: one"), std::string::npos) << seen;
  EXPECT_NE(seen.find("data: two"), std::string::npos) << seen;
  EXPECT_NE(seen.find("\r\n0\r\n\r\n"), std::string::npos) << seen;  // the last chunk
  EXPECT_TRUE(source->closed);
}

TEST_F(BeastHttpServerTest, LiveBodiesHoldNoWorkerAndCloseWhenTheClientLeaves) {
  HttpServerOptions o = Fast();
  o.worker_threads = 1;
  Start(o);
  std::vector<std::unique_ptr<RawConnection>> clients;
  for (int i = 0; i < 10; ++i) {
    clients.push_back(Connect());
    ASSERT_TRUE(clients.back()->Send(Get("/live")));
  }
  for (auto end = Clock::now() + 2s; server_->stats().live_streams < 10 && Clock::now() < end;) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(server_->stats().live_streams, 10);
  // Ten open streams and one worker: a plain request still answers.
  EXPECT_NE(Fetch(Get("/hello")).find("hello"), std::string::npos);
  clients[0].reset();  // the client goes away
  std::shared_ptr<TestLiveSource> first;
  {
    std::lock_guard<std::mutex> lock(service_.live_mu);
    first = service_.live[0];
  }
  for (auto end = Clock::now() + 2s; !first->closed && Clock::now() < end;) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(first->closed);
  server_->Stop();  // closes the others, and their sources
  std::lock_guard<std::mutex> lock(service_.live_mu);
  for (const auto& s : service_.live) EXPECT_TRUE(s->closed);
}

}  // namespace
}  // namespace export_center::http
