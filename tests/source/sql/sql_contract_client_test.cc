// The SQL contract client against a real HTTP server on loopback: answers are
// capped while they are read, as provider batches are.

#include "source/sql/sql_contract_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "http/httplib/httplib_http_client.h"
#include "tests/fakes/scripted_http_client.h"

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
    o.service = {"orders", "http://127.0.0.1:" + std::to_string(port_), "token-0123456789",
                 /*base_path=*/""};
    o.query_id = "orders.list";
    o.client.max_response_bytes = 64 * 1024;
    o.client.read_timeout_ms = 2000;
    return NewHttpSqlContractClient(o, http::HttplibClientFactory());
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

// On the scripted HttpClient fake: the path with its encoded queryId, the
// token, the bounds, and one client kept alive for every call.
TEST(SqlContractClientFakeTest, EachCallNamesItsOperationAndEncodedQueryIdOnOneClient) {
  fakes::ScriptedHttpClientFactory http(
      {{200, R"({"code":"200","message":"success","data":7})"},
       {200, R"({"code":"200","message":"success","data":"9"})"}});
  SqlContractClientOptions o;
  o.service = {"orders", "http://orders.internal:8080", "token-0123456789", /*base_path=*/""};
  o.query_id = "orders list/é";
  o.client.connect_timeout_ms = 1500;
  o.client.read_timeout_ms = 2500;
  o.client.max_response_bytes = 4096;
  auto client = NewHttpSqlContractClient(o, &http);
  StatusOr<std::string> version = client->GetVersion(nlohmann::json::object());
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, "7");
  StatusOr<int64_t> count = client->CountForList(nlohmann::json{{"status", "PAID"}});
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, 9);

  const auto opened = http.opened();
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].base_url, "http://orders.internal:8080");
  EXPECT_EQ(opened[0].connect_timeout_ms, 1500);
  EXPECT_EQ(opened[0].read_timeout_ms, 2500);
  EXPECT_EQ(opened[0].write_timeout_ms, 2500);
  EXPECT_TRUE(opened[0].keep_alive);
  const auto calls = http.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].request.path, "/dispatch/version?queryId=orders%20list%2F%C3%A9");
  EXPECT_EQ(calls[1].request.path, "/dispatch/count?queryId=orders%20list%2F%C3%A9");
  EXPECT_EQ(calls[1].request.method, "POST");
  EXPECT_EQ(calls[1].request.body, R"({"status":"PAID"})");
  EXPECT_EQ(calls[1].request.headers.Get("X-Internal-Service-Token"), "token-0123456789");
  EXPECT_EQ(calls[1].request.max_body_bytes, 4096);
  EXPECT_TRUE(calls[1].request.deadline.has_value());
}

TEST(SqlContractClientFakeTest, NoAnswerAndTooSlowKeepTheirErrorTexts) {
  fakes::ScriptedAnswer refused;
  refused.error = http::ClientError::kConnection;
  refused.error_text = "Connection";
  fakes::ScriptedAnswer slow;
  slow.too_slow = true;
  fakes::ScriptedHttpClientFactory http({refused, slow});
  SqlContractClientOptions o;
  o.service = {"orders", "http://orders.internal:8080", "t", /*base_path=*/""};
  o.query_id = "q";
  auto client = NewHttpSqlContractClient(o, &http);
  StatusOr<std::string> first = client->GetVersion(nlohmann::json::object());
  EXPECT_EQ(first.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(first.status().message(), "contract call /dispatch/version failed: Connection");
  StatusOr<std::string> second = client->GetVersion(nlohmann::json::object());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(second.status().message(),
            "contract answer to /dispatch/version took too long to arrive");
}

// docs/fuzzing.md#nesting: every contract answer is refused past the nesting bound before a
// tree exists (common/nesting.h), on each operation, with a clear permanent
// error; a million levels in /dispatch/sql's data (its columns, paramSchema,
// enrich entries are walked and quoted) or in enrich results alike.
TEST(SqlContractClientFakeTest, AnAnswerNestedAMillionDeepIsAClearPermanentFailure) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  const std::string envelope = R"({"code":"200","message":"success","data":)";
  fakes::ScriptedHttpClientFactory http(
      {{200, envelope + R"({"sqlTemplate":"SELECT 1","columns":)" + deep + "}}"},
       {200, envelope + deep + "}"},
       {200, envelope + "[{\"a\":" + deep + "}]}"},
       {503, deep}});
  SqlContractClientOptions o;
  o.service = {"orders", "http://orders.internal:8080", "t", ""};
  o.query_id = "q";
  auto client = NewHttpSqlContractClient(o, &http);
  StatusOr<SqlContract> contract = client->GetSqlTemplate(nlohmann::json::object());
  EXPECT_EQ(contract.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(contract.status().message(),
            "contract answer to /dispatch/sql: JSON nested deeper than 64 levels");
  StatusOr<int64_t> count = client->CountForList(nlohmann::json::object());
  EXPECT_EQ(count.status().message(),
            "contract answer to /dispatch/count: JSON nested deeper than 64 levels");
  EnrichRequest enrich;
  enrich.key_column = "id";
  enrich.keys = {"1"};
  StatusOr<std::vector<nlohmann::json>> enriched = client->Enrich(enrich);
  EXPECT_EQ(enriched.status().message(),
            "contract answer to /dispatch/enrich: JSON nested deeper than 64 levels");
  // A server error stays a server error (transient), whatever its body.
  StatusOr<std::string> version = client->GetVersion(nlohmann::json::object());
  EXPECT_EQ(version.status().code(), StatusCode::kUnavailable) << version.status().ToString();
}

}  // namespace
}  // namespace export_center::source
