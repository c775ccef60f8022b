#include "sdk/provider_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <stdexcept>
#include <thread>

#include "tests/support/raw_connection.h"

namespace export_center::sdk {
namespace {

using nlohmann::json;

constexpr char kToken[] = "internal-token-1";
constexpr char kSecret[] = "snapshot-secret-0123456789abcdef0123";

std::vector<Column> TestColumns() {
  return {{"id", "ID", ColumnType::kInteger, 20, 0, ""},
          {"amount", "金额", ColumnType::kDecimal, 12, 2, "#,##0.00"}};
}

// Ten rows with ids 1..10; signs max id 10 at the first batch.
class NumbersProvider : public BatchProvider {
 public:
  std::string ExportType() const override { return "NUMBERS"; }
  std::vector<Column> Columns() const override { return TestColumns(); }
  Result<BatchResponse> Fetch(const BatchRequest& request) override {
    last_request = request;
    if (request.parameters.contains("boom")) throw std::runtime_error("business bug");
    int64_t max_id = 10;
    BatchResponse response;
    if (request.snapshot_token) {
      auto verified = signer_.Verify(request, *request.snapshot_token);
      if (!verified) return ProviderError{400, "snapshotToken is invalid"};
      max_id = *verified;
    } else {
      response.snapshot_token = signer_.Sign(request, max_id);
      response.total_rows = max_id;
    }
    auto after = ParseIdCursor(request.cursor);
    if (!after) return ProviderError{400, "bad cursor"};
    int64_t id = *after;
    RowWriter written(TestColumns());
    for (int n = 0; id < max_id && n < request.limit; ++n) {
      ++id;
      if (!use_writer) {
        response.rows.push_back({{"id", IntegerValue(id)}, {"amount", DecimalValue(id * 101, 2)}});
      } else if (id == short_row) {
        written.Row().Integer(id);
      } else {
        written.Row().Integer(id).Decimal(id * 101, 2);
      }
    }
    if (use_writer) response.written = std::move(written);
    response.has_more = id < max_id;
    if (response.has_more) response.next_cursor = IdCursor(id);
    return response;
  }
  BatchRequest last_request;
  bool use_writer = false;  // RowWriter instead of JSON rows
  int64_t short_row = 0;    // with the writer: this row gets one cell too few

 private:
  SnapshotSigner signer_{kSecret};
};

json Body(std::optional<std::string> cursor = std::nullopt,
          std::optional<std::string> token = std::nullopt) {
  return {{"taskId", "1900000000000000001"},
          {"tenantId", "1"},
          {"appCode", "PLATFORM"},
          {"requestedBy", "1900000000000000009"},
          {"dispatchVersion", 1},
          {"parameters", {{"keyword", "柏悦"}}},
          {"cursor", cursor ? json(*cursor) : json()},
          {"snapshotToken", token ? json(*token) : json()},
          {"limit", 4}};
}

class ProviderServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    provider_ = std::make_shared<NumbersProvider>();
    RegisterBatchProviders(server_, kToken, {provider_});
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }

  // {HTTP status, parsed body}.
  std::pair<int, json> Call(const std::string& body, const std::string& token = kToken,
                            const std::string& type = "NUMBERS") {
    httplib::Client client("127.0.0.1", port_);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace(kTokenHeader, token);
    auto res = client.Post(("/internal/exports/v1/" + type + "/batches").c_str(), headers, body,
                           "application/json");
    if (!res) return {0, json()};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  httplib::Server server_;
  std::shared_ptr<NumbersProvider> provider_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(ProviderServerTest, TokenIsChecked) {
  for (std::string token : {"", "wrong", "internal-token-", "internal-token-12"}) {
    auto [status, body] = Call(Body().dump(), token);
    EXPECT_EQ(status, 401) << token;
    EXPECT_EQ(body["code"], "401");
    EXPECT_TRUE(body["data"].is_null());
  }
  // Without a token even an unknown type answers 401: nothing leaks.
  EXPECT_EQ(Call(Body().dump(), "nope", "SECRET_TYPES").first, 401);
  EXPECT_EQ(Call(Body().dump(), kToken, "OTHER").first, 404);
}

TEST_F(ProviderServerTest, EmptyConfiguredTokenRejectsEverything) {
  EXPECT_FALSE(TokenMatches("", ""));
  EXPECT_FALSE(TokenMatches("a", ""));
  EXPECT_TRUE(TokenMatches("a", "a"));
}

TEST_F(ProviderServerTest, EnvelopeAndPaging) {
  auto [status, first] = Call(Body().dump());
  ASSERT_EQ(status, 200);
  EXPECT_EQ(first["code"], "200");
  EXPECT_EQ(first["message"], "success");
  const json& data = first["data"];
  EXPECT_EQ(data["schemaVersion"], 1);
  EXPECT_EQ(data["schemaHash"], SchemaHash(TestColumns()));
  EXPECT_EQ(data["columns"], ColumnsToJson(TestColumns()));
  EXPECT_EQ(data["columns"][1]["scale"], 2);
  EXPECT_EQ(data["rows"].size(), 4u);
  EXPECT_EQ(data["rows"][0]["id"], "1");
  EXPECT_EQ(data["rows"][0]["amount"], "1.01");
  EXPECT_EQ(data["hasMore"], true);
  EXPECT_EQ(data["nextCursor"], "4");
  EXPECT_EQ(data["totalRows"], 10);
  std::string token = data["snapshotToken"];

  EXPECT_EQ(provider_->last_request.tenant_id, "1");
  EXPECT_EQ(provider_->last_request.task_id, 1900000000000000001LL);
  EXPECT_EQ(provider_->last_request.parameters["keyword"], "柏悦");

  auto [status2, second] = Call(Body("4", token).dump());
  ASSERT_EQ(status2, 200);
  EXPECT_FALSE(second["data"].contains("columns"));
  EXPECT_EQ(second["data"]["schemaHash"], data["schemaHash"]);
  EXPECT_EQ(second["data"]["snapshotToken"], token);
  EXPECT_EQ(second["data"]["rows"][0]["id"], "5");

  auto [status3, last] = Call(Body("8", token).dump());
  EXPECT_EQ(last["data"]["hasMore"], false);
  EXPECT_TRUE(last["data"]["nextCursor"].is_null());
  EXPECT_EQ(last["data"]["rows"].size(), 2u);
}

// Rows written by a RowWriter make the very same envelope as JSON rows.
TEST_F(ProviderServerTest, WrittenRowsMakeTheSameEnvelope) {
  auto [status, rows] = Call(Body().dump());
  provider_->use_writer = true;
  auto [written_status, written] = Call(Body().dump());
  ASSERT_EQ(status, 200);
  ASSERT_EQ(written_status, 200) << written.dump();
  EXPECT_EQ(written, rows);
  auto [later, later_body] = Call(Body("4", rows["data"]["snapshotToken"]).dump());
  ASSERT_EQ(later, 200);
  EXPECT_FALSE(later_body["data"].contains("columns"));
  EXPECT_EQ(later_body["data"]["rows"][0], (json{{"id", "5"}, {"amount", "5.05"}}));
}

TEST_F(ProviderServerTest, AWrittenRowWithTooFewCellsIsAProviderBug) {
  provider_->use_writer = true;
  provider_->short_row = 2;
  auto [status, body] = Call(Body().dump());
  EXPECT_EQ(status, 500);
  EXPECT_EQ(body["message"], "provider bug: row 2 has 1 cells for 2 columns");
}

// One connection carries a whole export: cpp-httplib's default closes it
// after five requests.
TEST_F(ProviderServerTest, OneConnectionServesManyBatches) {
  auto conn = testing::RawConnection::Open(port_);
  ASSERT_NE(conn, nullptr);
  const std::string body = Body().dump();
  const std::string request =
      std::string("POST /internal/exports/v1/NUMBERS/batches HTTP/1.1\r\n") +
      "Host: 127.0.0.1\r\n" + kTokenHeader + ": " + kToken +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(conn->Send(request)) << "request " << i + 1;
    std::string response = conn->ReadResponse(std::chrono::seconds(5));
    ASSERT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << "request " << i + 1 << ": " << response;
  }
}

TEST_F(ProviderServerTest, StrictRequestParsing) {
  auto without = [](const char* key) {
    json b = Body();
    b.erase(key);
    return b.dump();
  };
  auto with = [](const char* key, json value) {
    json b = Body();
    b[key] = std::move(value);
    return b.dump();
  };
  for (const std::string& body : {std::string("not json"),
                                  std::string("[]"),
                                  without("tenantId"),
                                  without("appCode"),
                                  without("requestedBy"),
                                  without("taskId"),
                                  without("limit"),
                                  without("dispatchVersion"),
                                  with("tenantId", ""),
                                  with("tenantId", 1),
                                  with("tenantId", "1\n2"),
                                  with("appCode", "platform"),
                                  with("taskId", 12),
                                  with("taskId", "012"),
                                  with("limit", 0),
                                  with("limit", 5001),
                                  with("dispatchVersion", 0),
                                  with("parameters", json::array()),
                                  with("cursor", 5),
                                  with("cursor", "4"),
                                  with("snapshotToken", std::string(513, 't'))}) {
    auto [status, reply] = Call(body);
    EXPECT_EQ(status, 400) << body;
    EXPECT_EQ(reply["code"], "400") << body;
  }
  EXPECT_EQ(Call(std::string(70 * 1024, ' ')).first, 413);
}

TEST_F(ProviderServerTest, ForgedSnapshotTokenIsA400) {
  std::string token = Call(Body().dump()).second["data"]["snapshotToken"];
  std::string forged_id = "v1.99" + token.substr(token.find('.', 3));
  std::string flipped = token;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  for (const std::string& bad : {forged_id, flipped, std::string("v1.10.zz"),
                                 std::string("garbage"), std::string("v1..abc"), std::string("")}) {
    auto [status, reply] = Call(Body("4", bad).dump());
    EXPECT_EQ(status, 400) << bad;
    EXPECT_EQ(reply["code"], "400") << bad;
  }
  // The same token for another tenant is refused too.
  json other = Body("4", token);
  other["tenantId"] = "2";
  EXPECT_EQ(Call(other.dump()).first, 400);
}

TEST_F(ProviderServerTest, ThrowingProviderIsA500) {
  json b = Body();
  b["parameters"]["boom"] = true;
  auto [status, reply] = Call(b.dump());
  EXPECT_EQ(status, 500);
  EXPECT_EQ(reply["code"], "500");
}

TEST(SnapshotSigner, SignVerify) {
  SnapshotSigner signer(kSecret);
  BatchRequest r;
  r.export_type = "T";
  r.tenant_id = "1";
  r.app_code = "PLATFORM";
  r.task_id = 7;
  std::string token = signer.Sign(r, 12345);
  EXPECT_LE(token.size(), 512u);
  EXPECT_EQ(signer.Verify(r, token), 12345);
  EXPECT_FALSE(SnapshotSigner("another-secret-0123456789abcdef-xyz").Verify(r, token));
  BatchRequest other = r;
  other.task_id = 8;
  EXPECT_FALSE(signer.Verify(other, token));
  other = r;
  other.export_type = "U";
  EXPECT_FALSE(signer.Verify(other, token));
  std::string padded = "v1.012345" + token.substr(token.find('.', 3));
  EXPECT_FALSE(signer.Verify(r, padded));
  EXPECT_THROW(SnapshotSigner(""), std::invalid_argument);
}

TEST(WireValues, Encoders) {
  EXPECT_EQ(DecimalValue(6814110, 2), "68141.10");
  EXPECT_EQ(DecimalValue(-5, 2), "-0.05");
  EXPECT_EQ(DecimalValue(0, 2), "0.00");
  EXPECT_EQ(DecimalValue(123, 0), "123");
  EXPECT_EQ(DecimalValue(INT64_MIN, 2), "-92233720368547758.08");
  EXPECT_EQ(IntegerValue(9007199254740993LL), "9007199254740993");
  EXPECT_EQ(DateValue(2024, 2, 9), "2024-02-09");
  EXPECT_EQ(DateTimeValue(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(DateTimeValue(1785751200123LL), "2026-08-03T10:00:00.123Z");
  EXPECT_EQ(DateTimeValue(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_TRUE(NullValue().is_null());
  EXPECT_EQ(BooleanValue(true), true);
}

// RowWriter's text against the JSON encoders, including what needs escaping
// or replacing; nlohmann::json reads both back identically.
TEST(RowWriter, WritesWhatTheEncodersWrite) {
  std::vector<Column> columns = {{"s", "", ColumnType::kString, 0, 0, ""},
                                 {"i", "", ColumnType::kInteger, 0, 0, ""},
                                 {"d", "", ColumnType::kDecimal, 0, 2, ""},
                                 {"b", "", ColumnType::kBoolean, 0, 0, ""},
                                 {"day", "", ColumnType::kDate, 0, 0, ""},
                                 {"at", "", ColumnType::kDateTime, 0, 0, ""},
                                 {"key \"quoted\"", "", ColumnType::kString, 0, 0, ""}};
  const std::vector<std::string> texts = {"plain",
                                          "柏悦物流 😀",
                                          "tab\tnew\nline \"q\" back\\slash",
                                          std::string("nul\0x", 5),
                                          "\x01\x1f\x7f",
                                          "bad \xff\xfe utf8 \xc3",
                                          "overlong \xc0\xaf",
                                          "surrogate \xed\xa0\x80",
                                          "=1+1"};
  RowWriter writer(columns);
  json expected = json::array();
  int n = 0;
  for (const auto& text : texts) {
    const int64_t i = n % 2 ? INT64_MIN : 1900000000000000000LL + n;
    const int64_t cents = n % 3 ? -5 : 6814110;
    const int64_t at = n % 2 ? -86400001 : 1786000000123;
    writer.Row().String(text).Integer(i).Decimal(cents, 2).Boolean(n % 2).Date(2024, 2, 29);
    if (n == 3) {
      writer.DateTime(std::optional<int64_t>()).String(std::optional<std::string>());
    } else {
      writer.DateTime(at).String(text);
    }
    // The encoders' JSON, through nlohmann's replacing dump as the SDK sends it.
    json row = {{"s", StringValue(text)},
                {"i", IntegerValue(i)},
                {"d", DecimalValue(cents, 2)},
                {"b", BooleanValue(n % 2)},
                {"day", DateValue(2024, 2, 29)},
                {"at", n == 3 ? NullValue() : DateTimeValue(at)},
                {"key \"quoted\"", n == 3 ? NullValue() : StringValue(text)}};
    expected.push_back(json::parse(row.dump(-1, ' ', false, json::error_handler_t::replace)));
    ++n;
  }
  ASSERT_FALSE(writer.error()) << *writer.error();
  EXPECT_EQ(writer.rows(), texts.size());
  std::string text;
  writer.AppendJson(&text);
  json parsed = json::parse(text, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << text;
  EXPECT_EQ(parsed, expected);
  EXPECT_EQ(parsed[5]["s"], "bad \xEF\xBF\xBD\xEF\xBF\xBD utf8 \xEF\xBF\xBD") << text;
}

TEST(RowWriter, CellCountMistakesAreNamed) {
  std::vector<Column> columns = TestColumns();
  RowWriter empty(columns);
  EXPECT_FALSE(empty.error());
  std::string text;
  empty.AppendJson(&text);
  EXPECT_EQ(text, "[]");
  RowWriter too_many(columns);
  too_many.Row().Integer(1).Decimal(1, 2).Null();
  EXPECT_EQ(too_many.error(), "row 1 has 3 cells for 2 columns");
  RowWriter too_few(columns);
  too_few.Row().Integer(1).Decimal(1, 2).Row().Integer(2).Row().Integer(3).Null();
  EXPECT_EQ(too_few.error(), "row 2 has 1 cells for 2 columns");
}

TEST(WireValues, Cursors) {
  EXPECT_EQ(ParseIdCursor(std::nullopt), 0);
  EXPECT_EQ(ParseIdCursor(IdCursor(10000000001)), 10000000001);
  EXPECT_FALSE(ParseIdCursor(std::string("")));
  EXPECT_FALSE(ParseIdCursor(std::string("-1")));
  EXPECT_FALSE(ParseIdCursor(std::string("12a")));
  EXPECT_FALSE(ParseIdCursor(std::string("99999999999999999999")));
}

TEST(WireValues, SchemaHashFollowsColumns) {
  auto cols = TestColumns();
  std::string hash = SchemaHash(cols);
  EXPECT_EQ(hash.rfind("sha256:", 0), 0u);
  EXPECT_EQ(hash.size(), 7u + 64u);
  EXPECT_EQ(SchemaHash(TestColumns()), hash);
  cols[1].scale = 3;
  EXPECT_NE(SchemaHash(cols), hash);
  cols = TestColumns();
  cols[0].title = "编号";
  EXPECT_NE(SchemaHash(cols), hash);
}

}  // namespace
}  // namespace export_center::sdk
