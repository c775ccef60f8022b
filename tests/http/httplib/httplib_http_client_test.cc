// The cpp-httplib HttpClient (http/httplib/httplib_http_client.h) against a
// real HTTP server on loopback (a cpp-httplib server on a free port): status,
// headers and body both ways, the body cap (declared and streamed), the
// deadline, the read timeout, a refused connection, status-only calls,
// redirects not followed, and one kept-alive connection.

#include "http/httplib/httplib_http_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace export_center::http {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class HttplibHttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu_);
        peers_.insert(req.remote_port);
      }
      res.status = 201;
      res.set_header("X-Seen-Token", req.get_header_value("X-Token"));
      res.set_header("X-Seen-Type", req.get_header_value("Content-Type"));
      res.set_header("X-Seen-Query", req.get_param_value("q"));
      res.set_content(req.method + " " + req.path + " " + req.body, "text/plain");
    });
    server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(1000, 'x'), "text/plain");  // declares 1000 bytes
    });
    // Streams 16 KiB chunks without end.
    server_.Get("/endless", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [](size_t, httplib::DataSink& sink) {
        static const std::string chunk(16 * 1024, ' ');
        return sink.write(chunk.data(), chunk.size());
      });
    });
    // A byte every 50 ms without end: no silent gap ever reaches a read timeout.
    server_.Get("/trickle", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [](size_t, httplib::DataSink& sink) {
        std::this_thread::sleep_for(milliseconds(50));
        return sink.write(" ", 1);
      });
    });
    server_.Get("/hang", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(milliseconds(1500));
      res.set_content("late", "text/plain");
    });
    server_.Get("/moved",
                [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/echo"); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(milliseconds(5));
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }

  std::unique_ptr<HttpClient> Client(int read_timeout_ms = 2000, bool keep_alive = false) {
    HttpClientOptions o;
    o.base_url = "http://127.0.0.1:" + std::to_string(port_);
    o.connect_timeout_ms = 1000;
    o.read_timeout_ms = read_timeout_ms;
    o.write_timeout_ms = 1000;
    o.keep_alive = keep_alive;
    auto client = HttplibClientFactory()->NewClient(o);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(*client);
  }

  static ClientRequest Get(std::string path) {
    ClientRequest r;
    r.path = std::move(path);
    return r;
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::set<int> peers_;
};

TEST_F(HttplibHttpClientTest, SendsMethodPathHeadersAndBodyAndReadsStatusHeadersAndBody) {
  ClientRequest r;
  r.method = "POST";
  r.path = "/echo?q=" + EncodeQueryParam("a b");
  r.headers.Add("X-Token", "t-1");
  r.content_type = "application/json";
  r.body = R"({"k":1})";
  ClientAnswer a = Client()->Send(r);
  ASSERT_EQ(a.outcome, ClientAnswer::Outcome::kRead) << a.error_text;
  EXPECT_EQ(a.status, 201);
  EXPECT_EQ(a.headers.Get("x-seen-token"), "t-1");  // names compare case-insensitively
  EXPECT_EQ(a.headers.Get("X-Seen-Type"), "application/json");
  EXPECT_EQ(a.headers.Get("X-Seen-Query"), "a b");
  EXPECT_EQ(a.body, R"(POST /echo {"k":1})");
  EXPECT_EQ(a.error, ClientError::kNone);
}

TEST_F(HttplibHttpClientTest, ADeclaredLengthPastTheCapStopsBeforeTheBody) {
  ClientRequest r = Get("/big");
  r.max_body_bytes = 999;
  ClientAnswer a = Client()->Send(r);
  EXPECT_EQ(a.outcome, ClientAnswer::Outcome::kTooLarge);
  EXPECT_EQ(a.status, 200);  // the status is kept when reading stops
  EXPECT_TRUE(a.body.empty());
  r.max_body_bytes = 1000;  // exactly at the cap is fine
  a = Client()->Send(r);
  EXPECT_EQ(a.outcome, ClientAnswer::Outcome::kRead);
  EXPECT_EQ(a.body.size(), 1000u);
}

TEST_F(HttplibHttpClientTest, AStreamedBodyPastTheCapIsCutWhileReading) {
  ClientRequest r = Get("/endless");
  r.max_body_bytes = 64 * 1024;
  const auto start = Clock::now();
  ClientAnswer a = Client()->Send(r);
  EXPECT_EQ(a.outcome, ClientAnswer::Outcome::kTooLarge);
  EXPECT_EQ(a.status, 200);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

TEST_F(HttplibHttpClientTest, TheDeadlineEndsABodyThatTricklesForever) {
  ClientRequest r = Get("/trickle");
  r.deadline = Clock::now() + milliseconds(300);
  const auto start = Clock::now();
  ClientAnswer a = Client(/*read_timeout_ms=*/2000)->Send(r);
  EXPECT_EQ(a.outcome, ClientAnswer::Outcome::kTooSlow);
  EXPECT_EQ(a.status, 200);
  const auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(1500));
}

TEST_F(HttplibHttpClientTest, ASilentPeerHitsTheReadTimeout) {
  const auto start = Clock::now();
  ClientAnswer a = Client(/*read_timeout_ms=*/200)->Send(Get("/hang"));
  EXPECT_EQ(a.outcome, ClientAnswer::Outcome::kNotSent);
  EXPECT_EQ(a.error, ClientError::kRead);
  EXPECT_EQ(a.error_text, "Read");
  EXPECT_LT(Clock::now() - start, milliseconds(1400));
}

TEST_F(HttplibHttpClientTest, ARefusedConnectionIsNotSent) {
  HttpClientOptions o;
  o.base_url = "http://127.0.0.1:1";  // tcpmux: nothing listens there
  o.connect_timeout_ms = 1000;
  auto client = HttplibClientFactory()->NewClient(o);
  ASSERT_TRUE(client.ok());
  ClientAnswer a = (*client)->Send(Get("/"));
  EXPECT_EQ(a.outcome, ClientAnswer::Outcome::kNotSent);
  EXPECT_EQ(a.error, ClientError::kConnection);
  EXPECT_EQ(a.error_text, "Connection");
  EXPECT_EQ(a.status, 0);
}

TEST_F(HttplibHttpClientTest, AStatusOnlyCallNeverReadsTheBody) {
  ClientRequest r = Get("/endless");
  r.read_body = false;
  const auto start = Clock::now();
  ClientAnswer a = Client()->Send(r);
  EXPECT_EQ(a.outcome, ClientAnswer::Outcome::kRead);
  EXPECT_EQ(a.status, 200);
  EXPECT_TRUE(a.body.empty());
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

TEST_F(HttplibHttpClientTest, RedirectsAreNotFollowed) {
  ClientAnswer a = Client()->Send(Get("/moved"));
  ASSERT_EQ(a.outcome, ClientAnswer::Outcome::kRead);
  EXPECT_EQ(a.status, 302);
  EXPECT_EQ(a.headers.Get("Location"), "/echo");
}

TEST_F(HttplibHttpClientTest, AKeptAliveClientServesEveryCallOnOneConnection) {
  auto client = Client(2000, /*keep_alive=*/true);
  ClientRequest r;
  r.method = "POST";
  r.path = "/echo";
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(client->Send(r).status, 201);
  }
  std::lock_guard lock(mu_);
  EXPECT_EQ(peers_.size(), 1u);
}

}  // namespace
}  // namespace export_center::http
