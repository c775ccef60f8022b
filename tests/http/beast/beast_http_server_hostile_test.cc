// The Beast server against hostile clients, over real loopback sockets:
// floods that would grow a connection's memory (each must leave the process's
// RSS within 8 MiB), and a table of framing cases (RFC 9112 §2–7) where each
// row says what comes back and whether the connection closes — and that
// nothing sent after a refused request is ever answered.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/beast/beast_http_server.h"
#include "tests/support/raw_connection.h"

namespace export_center::http {
namespace {

using namespace std::chrono_literals;
using testing::RawConnection;
using Clock = std::chrono::steady_clock;

class FramingService : public HttpService {
 public:
  HttpResponse Handle(HttpRequest& req) override {
    HttpResponse res;
    if (req.path == "/hello") {
      res.SetContent("hello", "text/plain");
    } else if (req.path == "/echo") {
      res.SetContent(req.method + " " + req.body + " q=" + req.Query("q"), "text/plain");
    } else if (req.path == "/host") {
      res.SetContent(req.Header("Host"), "text/plain");
    } else if (req.path == "/") {
      res.SetContent("root", "text/plain");
    } else if (req.target == "*") {
      res.SetContent("any", "text/plain");
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
};

class HostileClientTest : public ::testing::Test {
 protected:
  void Start() {
    HttpServerOptions o;
    o.worker_threads = 2;
    // A row that leaves the server waiting fails at WaitForClose instead of hanging.
    o.header_timeout = 1000ms;
    o.body_timeout = 1000ms;
    server_ = NewBeastHttpServer(o, &service_);
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  FramingService service_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

// ---- memory per connection --------------------------------------------------

int64_t RssBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return -1;
}

// The highest RSS seen while it runs.
class RssSampler {
 public:
  RssSampler() : thread_([this] { Run(); }) {}
  ~RssSampler() { Stop(); }
  int64_t Stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return peak_;
  }

 private:
  void Run() {
    while (!done_) {
      peak_ = std::max<int64_t>(peak_, RssBytes());
      std::this_thread::sleep_for(10ms);
    }
  }
  std::atomic<bool> done_{false};
  std::atomic<int64_t> peak_{0};
  std::thread thread_;
};

struct FloodTotals {
  std::atomic<uint64_t> offered{0};  // bytes the server accepted from us
  std::mutex mu;
  std::map<int, int> answers;  // status → connections; 0: closed unanswered. Guarded by mu.
  void Add(uint64_t bytes, int status) {
    offered += bytes;
    std::lock_guard<std::mutex> lock(mu);
    ++answers[status];
  }
};

constexpr uint64_t kFloodCapBytes = 256ull << 20;  // stop there: unbounded, that is RSS

// One connection: `prefix`, then `filler` as fast as the server takes it,
// until it answers or closes. Non-blocking, so a server that stops reading
// cannot hang the client.
void FloodOnce(int port, const std::string& prefix, const std::string& filler,
               Clock::time_point until, FloodTotals* totals) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return;
  }
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  uint64_t sent = 0;
  std::string pending = prefix;
  std::string answer;
  char buf[4096];
  while (Clock::now() < until && totals->offered + sent < kFloodCapBytes) {
    pollfd p{fd, POLLIN | POLLOUT, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) answer.append(buf, static_cast<size_t>(n));
      break;  // answered, or closed
    }
    if (pending.empty()) pending = filler;
    ssize_t n = ::send(fd, pending.data(), pending.size(), MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) break;
    if (n > 0) {
      sent += static_cast<uint64_t>(n);
      pending.erase(0, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  totals->Add(sent, testing::StatusOf(answer));
}

// Floods the server from a few clients for a few seconds (or until 256 MiB
// were taken) and checks that every connection was refused with `status` and
// that the process's RSS grew by at most 8 MiB meanwhile.
void ExpectBoundedFlood(int port, const std::string& prefix, const std::string& filler_unit,
                        int status) {
  std::string filler;
  while (filler.size() < 64 * 1024) filler += filler_unit;
  const int64_t before = RssBytes();
  FloodTotals totals;
  RssSampler sampler;
  const auto until = Clock::now() + 3s;
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      while (Clock::now() < until && totals.offered < kFloodCapBytes) {
        FloodOnce(port, prefix, filler, until, &totals);
      }
    });
  }
  for (auto& t : clients) t.join();
  const int64_t growth = sampler.Stop() - before;
  std::cout << "flood: " << (totals.offered >> 20) << " MiB offered on " << totals.answers[status]
            << " refused connections, RSS growth " << growth / 1024 << " KiB\n";
  EXPECT_LE(growth, 8 << 20) << "RSS grew by " << growth << " bytes";
  EXPECT_GT(totals.answers[status], 0);
  // Every connection was refused with the expected answer, or cut by the
  // flood's end (status 0) — never answered otherwise.
  for (const auto& [got, count] : totals.answers) {
    EXPECT_TRUE(got == status || got == 0) << count << " connections got " << got;
  }
  EXPECT_LE(totals.answers[0], 8) << "most connections must be answered, not cut";
}

const std::string kChunkedPost =
    "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST_F(HostileClientTest, EndlessChunkSizeLineIsCapped) {
  Start();
  ExpectBoundedFlood(port_, kChunkedPost + "1", "1", 400);
}

TEST_F(HostileClientTest, EndlessChunkExtensionIsCapped) {
  Start();
  ExpectBoundedFlood(port_, kChunkedPost + "5;", "a", 400);
}

TEST_F(HostileClientTest, EndlessTrailerSectionIsCapped) {
  Start();
  ExpectBoundedFlood(port_, kChunkedPost + "0\r\n", "X-T: y\r\n", 400);
}

TEST_F(HostileClientTest, EndlessHeaderFieldsAreCapped) {
  Start();
  ExpectBoundedFlood(port_, "GET /hello HTTP/1.1\r\nHost: t\r\n", "X: y\r\n", 431);
}

TEST_F(HostileClientTest, EndlessHeaderValueIsCapped) {
  Start();
  ExpectBoundedFlood(port_, "GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: ", "a", 431);
}

TEST_F(HostileClientTest, EndlessBodyIsCapped) {
  Start();
  ExpectBoundedFlood(
      port_, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000000000\r\n\r\n", "b", 413);
}

TEST_F(HostileClientTest, EndlessChunkedBodyIsCapped) {
  Start();
  ExpectBoundedFlood(port_, kChunkedPost, "400\r\n" + std::string(1024, 'c') + "\r\n", 413);
}

// ---- framing ------------------------------------------------------------------

struct Answer {
  int status = 0;
  std::string body;
};

// Splits what came back into responses by their Content-Length.
std::vector<Answer> SplitAnswers(std::string all) {
  std::vector<Answer> out;
  while (!all.empty()) {
    size_t end = all.find("\r\n\r\n");
    if (all.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) {
      out.push_back({-1, all});  // not a response: shows in the failure
      break;
    }
    size_t length = 0;
    size_t at = all.find("\r\nContent-Length: ");
    if (at != std::string::npos && at < end) length = std::strtoull(&all[at + 18], nullptr, 10);
    out.push_back({testing::StatusOf(all), all.substr(end + 4, length)});
    all.erase(0, end + 4 + length);
  }
  return out;
}

struct FramingCase {
  const char* name;
  std::string bytes;
  std::vector<int> statuses;  // the answers, in order
  bool closes;                // the server closes the connection after them
  std::string first_body = "";
};

std::string Post(const std::string& headers, const std::string& body,
                 const std::string& version = "HTTP/1.1") {
  return "POST /echo " + version + "\r\nHost: t\r\n" + headers + "\r\n" + body;
}
std::string Chunked(const std::string& te, const std::string& body = "3\r\nabc\r\n0\r\n\r\n") {
  return Post("Transfer-Encoding: " + te + "\r\n", body);
}
std::string WithField(const std::string& field) {
  return "GET /hello HTTP/1.1\r\nHost: t\r\n" + field + "\r\n\r\n";
}
std::string Length(const std::string& value, const std::string& body = "hello") {
  return Post("Content-Length: " + value + "\r\n", body);
}
std::string Target(const std::string& line) { return line + " HTTP/1.1\r\nHost: other\r\n\r\n"; }
const std::string kGood = "GET /echo?q=after HTTP/1.1\r\nHost: t\r\n\r\n";

const std::vector<FramingCase>& FramingCases() {
  static const std::vector<FramingCase> cases = {
      // Transfer-Encoding (RFC 9112 §6.1, §6.3, §7)
      {"chunked", Chunked("chunked"), {200}, false, "POST abc q="},
      {"chunked in capitals, with OWS", Chunked(" CHUNKED "), {200}, false, "POST abc q="},
      {"gzip with a request as its body", Chunked("gzip", kGood), {400}, true},
      {"chunked, then gzip", Chunked("chunked, gzip"), {400}, true},
      {"gzip, then chunked", Chunked("gzip, chunked"), {400}, true},
      {"chunked twice in one field", Chunked("chunked, chunked"), {400}, true},
      {"chunked in two fields",
       Post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            "3\r\nabc\r\n0\r\n\r\n"),
       {400},
       true},
      {"gzip field, then chunked field",
       Post("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"),
       {400},
       true},
      {"chunked with a parameter", Chunked("chunked;q=1"), {400}, true},
      {"identity", Chunked("identity", kGood), {400}, true},
      {"empty Transfer-Encoding", Chunked("", kGood), {400}, true},
      {"chunked misspelt", Chunked("xchunked"), {400}, true},
      {"HTTP/1.0 with chunked",
       Post("Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n", "HTTP/1.0"),
       {400},
       true},
      // Transfer-Encoding with Content-Length (§6.1)
      {"chunked, then Content-Length",
       Post("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", "3\r\nabc\r\n0\r\n\r\n"),
       {400},
       true},
      {"Content-Length, then chunked",
       Post("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"),
       {400},
       true},
      {"gzip with Content-Length",
       Post("Transfer-Encoding: gzip\r\nContent-Length: 5\r\n", "hello"),
       {400},
       true},
      // Content-Length (RFC 9110 §8.6, RFC 9112 §6.3)
      {"Content-Length", Length("5"), {200}, false, "POST hello q="},
      {"Content-Length list of equal values", Length("5, 5"), {200}, false, "POST hello q="},
      {"Content-Length twice, equal",
       Post("Content-Length: 5\r\nContent-Length: 5\r\n", "hello"),
       {200},
       false,
       "POST hello q="},
      {"Content-Length twice, differing",
       Post("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!"),
       {400},
       true},
      {"Content-Length list, differing", Length("5, 6", "hello!"), {400}, true},
      {"Content-Length with a plus sign", Length("+5"), {400}, true},
      {"Content-Length negative", Length("-5"), {400}, true},
      {"Content-Length in hex", Length("0x5"), {400}, true},
      {"Content-Length over 64 bits", Length("99999999999999999999999"), {400}, true},
      {"Content-Length empty", Length(""), {400}, true},
      {"Content-Length with an inner space", Length("5 5"), {400}, true},
      {"Content-Length over the body limit", Length("1000000", ""), {413}, true},
      // Field syntax (§5)
      {"obs-fold with SP", WithField("X-A: a\r\n b"), {400}, true},
      {"obs-fold with HTAB", WithField("X-A: a\r\n\tb"), {400}, true},
      {"whitespace before the first field", "GET /hello HTTP/1.1\r\n Host: t\r\n\r\n", {400}, true},
      {"space in a field name", WithField("Bad Name: x"), {400}, true},
      {"space before the colon", WithField("X-A : x"), {400}, true},
      {"empty field name", WithField(": x"), {400}, true},
      {"separator in a field name", WithField("X@A: x"), {400}, true},
      {"NUL in a value", WithField(std::string("X-A: a\0b", 8)), {400}, true},
      {"bare CR in a value", WithField("X-A: a\rb"), {400}, true},
      {"bare LF in a value", WithField("X-A: a\nb"), {400}, true},
      // Line ends (§2.2)
      {"bare LF line ends", "GET /hello HTTP/1.1\nHost: t\n\n", {400}, true},
      {"bare LF after the request line", "GET /hello HTTP/1.1\nHost: t\r\n\r\n", {400}, true},
      {"empty lines before the request line", "\r\n\r\n" + kGood, {200}, false, "GET  q=after"},
      {"HTTP/1.2", "GET /hello HTTP/1.2\r\nHost: t\r\n\r\n", {400}, true},
      {"HTTP/2.0", "GET /hello HTTP/2.0\r\nHost: t\r\n\r\n", {400}, true},
      // Host (§3.2)
      {"HTTP/1.1 without Host", "GET /hello HTTP/1.1\r\n\r\n", {400}, true},
      {"two Host fields", WithField("Host: u"), {400}, true},
      {"Host with a space", "GET /hello HTTP/1.1\r\nHost: a b\r\n\r\n", {400}, true},
      {"HTTP/1.0 without Host", "GET /hello HTTP/1.0\r\n\r\n", {200}, true, "hello"},
      // Request targets (§3.2)
      {"absolute-form",
       Target("GET http://real.example:8080/host?q=1"),
       {200},
       false,
       "real.example:8080"},
      {"absolute-form with an empty path",
       Target("GET HTTP://real.example?q=1"),
       {200},
       false,
       "root"},
      {"absolute-form, other scheme", Target("GET ftp://real.example/hello"), {400}, true},
      {"absolute-form with userinfo", Target("GET http://u@real.example/hello"), {400}, true},
      {"absolute-form with no host", Target("GET http:///hello"), {400}, true},
      {"asterisk-form with OPTIONS", Target("OPTIONS *"), {200}, false, "any"},
      {"asterisk-form with GET", Target("GET *"), {400}, true},
      {"authority-form", Target("CONNECT real.example:443"), {400}, true},
      {"relative target", Target("GET hello"), {400}, true},
      // Chunked bodies (§7)
      {"chunked with a trailer",
       Chunked("chunked", "3\r\nabc\r\n0\r\nX-Sum: 1\r\n\r\n"),
       {200},
       false,
       "POST abc q="},
      {"chunk extension",
       Chunked("chunked", "3;name=\"v\"\r\nabc\r\n0\r\n\r\n"),
       {200},
       false,
       "POST abc q="},
      {"LF in a quoted chunk extension",
       Chunked("chunked", "3;a=\"x\ny\"\r\nabc\r\n0\r\n\r\n"),
       {400},
       true},
      {"bare LF after a chunk size", Chunked("chunked", "3\nabc\r\n0\r\n\r\n"), {400}, true},
      {"chunk size over 64 bits", Chunked("chunked", "fffffffffffffffffff\r\n"), {400}, true},
      {"chunk size with a sign", Chunked("chunked", "+3\r\nabc\r\n0\r\n\r\n"), {400}, true},
      {"chunk longer than its size", Chunked("chunked", "3\r\nabcd\r\n0\r\n\r\n"), {400}, true},
      {"Content-Length in the trailer",
       Chunked("chunked", "3\r\nabc\r\n0\r\nContent-Length: 9\r\n\r\n"),
       {400},
       true},
      // Pipelining: nothing after a refusal is answered
      {"refused, then a good request", Length("+5") + kGood, {400}, true},
      {"good, refused, good",
       kGood + Chunked("gzip", kGood) + kGood,
       {200, 400},
       true,
       "GET  q=after"},
      {"two good requests", kGood + kGood, {200, 200}, false, "GET  q=after"},
  };
  return cases;
}

// Each row is sent with a probe after it (GET /hello, Connection: close): a
// row that keeps the connection gets the probe answered last; a row that
// closes it must not — whatever follows a refusal is never answered.
TEST_F(HostileClientTest, FramingTable) {
  Start();
  const std::string probe = "GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  ASSERT_GE(FramingCases().size(), 30u);
  for (const FramingCase& row : FramingCases()) {
    SCOPED_TRACE(row.name);
    auto c = RawConnection::Open(port_);
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Send(row.bytes + probe));
    std::string all;
    EXPECT_EQ(c->WaitForClose(3s, &all), RawConnection::End::kEof);
    std::vector<Answer> answers = SplitAnswers(all);
    std::vector<int> want = row.statuses;
    if (!row.closes) want.push_back(200);
    std::vector<int> got;
    for (const Answer& a : answers) got.push_back(a.status);
    EXPECT_EQ(got, want) << all;
    if (!row.first_body.empty() && !answers.empty()) {
      EXPECT_EQ(answers[0].body, row.first_body);
    }
    if (!row.closes && !answers.empty()) {
      EXPECT_EQ(answers.back().body, "hello");
    }
  }
}

}  // namespace
}  // namespace export_center::http
