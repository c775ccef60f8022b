// The SQL contract client against a real HTTP server on loopback: answers are
// capped while they are read, as provider batches are.

#include "source/sql/sql_contract_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace export_center::source {
namespace {

class SqlContractClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A service that streams its answer to /dispatch/version without end.
    server_.Post("/dispatch/version", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/json", [this](size_t, httplib::DataSink& sink) {
        static const std::string chunk(16 * 1024, ' ');
        sent_bytes_ += chunk.size();
        return sink.write(chunk.data(), chunk.size());
      });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }

  std::unique_ptr<SqlContractClient> Client() {
    SqlContractClientOptions o;
    o.service = {"orders", "http://127.0.0.1:" + std::to_string(port_), "token-0123456789"};
    o.query_id = "orders.list";
    o.client.max_response_bytes = 64 * 1024;
    o.client.read_timeout_ms = 2000;
    return NewHttpSqlContractClient(o);
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int64_t> sent_bytes_{0};
};

TEST_F(SqlContractClientTest, AnEndlessAnswerIsCutAtTheCapWhileReading) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> version = Client()->GetVersion(nlohmann::json::object());
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(version.status().code(), StatusCode::kInvalidArgument) << version.status().ToString();
  EXPECT_NE(version.status().message().find("exceeds 65536 bytes"), std::string::npos)
      << version.status().ToString();
  // Read up to the cap and then stopped: not the whole (endless) stream.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace export_center::source
