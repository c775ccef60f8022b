#include "source/provider/provider_batch_source.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/utf8.h"
#include "http/httplib/httplib_http_client.h"
#include "tests/fakes/scripted_http_client.h"

namespace export_center::source {
namespace {

using nlohmann::json;

constexpr char kToken[] = "s3cret-token-0123456789";
constexpr char kPath[] = "/internal/exports/v1/CUSTOMER_LIST/batches";

// A provider on 127.0.0.1:<port 0> whose answers each test scripts, so it
// can lie in every way the center must survive.
class FakeProvider {
 public:
  using Handler = std::function<void(int call, const json& request, httplib::Response& res)>;

  FakeProvider() {
    server_.Post(kPath, [this](const httplib::Request& req, httplib::Response& res) {
      json body = json::parse(req.body, nullptr, false);
      int call;
      {
        std::lock_guard lock(mu_);
        requests_.push_back(body);
        tokens_.push_back(req.get_header_value("X-Internal-Service-Token"));
        call = static_cast<int>(requests_.size());
      }
      handler_(call, body, res);
    });
    server_.set_tcp_nodelay(true);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // The socket already listens after bind, so early connects just queue.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeProvider() {
    server_.stop();
    thread_.join();
  }

  void OnBatch(Handler h) { handler_ = std::move(h); }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<json> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::vector<std::string> tokens() {
    std::lock_guard lock(mu_);
    return tokens_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  Handler handler_;
  std::mutex mu_;
  std::vector<json> requests_;
  std::vector<std::string> tokens_;
};

json Columns() {
  return json::parse(R"([
    {"key":"id","title":"ID","type":"INTEGER","width":20},
    {"key":"name","title":"公司名称","type":"STRING","width":28},
    {"key":"balance","title":"余额","type":"DECIMAL","scale":2},
    {"key":"vip","title":"VIP","type":"BOOLEAN"},
    {"key":"registeredOn","title":"注册日期","type":"DATE"},
    {"key":"lastOrderAt","title":"最近下单","type":"DATETIME"}])");
}

json Row(int id) {
  return json{{"id", std::to_string(1900000000000000000LL + id)},
              {"name", "柏悦物流" + std::to_string(id)},
              {"balance", id == 1 ? json::parse("68141.1") : json("-12.5")},
              {"vip", id % 2 == 0},
              {"registeredOn", "2024-02-29"},
              {"lastOrderAt", id == 3 ? json() : json("2026-08-03T18:00:00+08:00")}};
}

json Data(std::vector<json> rows, bool has_more, json next_cursor, bool with_columns = true) {
  json d = {{"schemaVersion", 1}, {"schemaHash", "sha256:abc"}, {"snapshotToken", "snap-1"},
            {"rows", rows},       {"nextCursor", next_cursor},  {"hasMore", has_more},
            {"totalRows", 5}};
  if (with_columns) d["columns"] = Columns();
  return d;
}

void Answer(httplib::Response& res, const json& data, int http = 200) {
  res.status = http;
  res.set_content(json{{"code", "200"}, {"message", "success"}, {"data", data}}.dump(),
                  "application/json");
}

void Fail(httplib::Response& res, int http, const std::string& code, const std::string& message) {
  res.status = http;
  res.set_content(json{{"code", code}, {"message", message}, {"data", nullptr}}.dump(),
                  "application/json");
}

class ProviderBatchSourceTest : public ::testing::Test {
 protected:
  ProviderBatchOptions Options() {
    ProviderBatchOptions o;
    o.service = {"customer-service", provider_.base_url(), kToken, /*base_path=*/""};
    o.path = kPath;
    o.export_type = "CUSTOMER_LIST";
    o.task_id = 1900000000000000001LL;
    o.tenant_id = "1";
    o.requested_by = "1900000000000000009";
    o.dispatch_version = 2;
    o.parameters_json = R"({"keyword":"柏悦"})";
    o.batch_size = 2;
    o.max_rows = 1000;
    o.client.connect_timeout_ms = 1000;
    o.client.read_timeout_ms = 2000;
    return o;
  }

  // Pulls until the end or the first error.
  Status Drain(RowSource& source, int64_t* rows = nullptr) {
    for (int i = 0; i < 100; ++i) {
      auto page = source.NextPage();
      if (!page.ok()) return page.status();
      if (rows) *rows += static_cast<int64_t>(page->rows.size());
      if (!page->has_more) return Status::Ok();
    }
    return Internal("too many pages");
  }

  Status RunWith(FakeProvider::Handler h, ProviderBatchOptions options) {
    provider_.OnBatch(std::move(h));
    auto source = NewProviderBatchSource(options, http::HttplibClientFactory());
    return Drain(*source);
  }
  Status RunWith(FakeProvider::Handler h) { return RunWith(std::move(h), Options()); }

  FakeProvider provider_;
};

TEST_F(ProviderBatchSourceTest, HappyPathThreeBatches) {
  provider_.OnBatch([](int call, const json& req, httplib::Response& res) {
    if (call == 1) return Answer(res, Data({Row(1), Row(2)}, true, "2"));
    if (call == 2) return Answer(res, Data({Row(3), Row(4)}, true, "4", false));
    Answer(res, Data({Row(5)}, false, nullptr, false));
  });
  auto source = NewProviderBatchSource(Options(), http::HttplibClientFactory());
  std::vector<task::Row> rows;
  std::vector<std::optional<int64_t>> totals;
  for (;;) {
    auto page = source->NextPage();
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    // The source's facts come with the first page only; a provider has none.
    ASSERT_EQ(page->facts.has_value(), totals.empty());
    if (page->facts) {
      EXPECT_EQ(page->facts->excel_template, nullptr);
      EXPECT_TRUE(page->facts->plan_advice.empty());
    }
    rows.insert(rows.end(), page->rows.begin(), page->rows.end());
    totals.push_back(page->total_rows);
    if (!page->has_more) break;
  }
  ASSERT_EQ(rows.size(), 5u);
  ASSERT_EQ(source->columns().size(), 6u);
  EXPECT_EQ(source->columns()[2].type, task::ColumnType::kDecimal);
  EXPECT_EQ(totals[0], 5);

  // Typed values.
  EXPECT_EQ(std::get<int64_t>(rows[0][0]), 1900000000000000001LL);
  EXPECT_EQ(std::get<std::string>(rows[0][1]), "柏悦物流1");
  EXPECT_EQ(std::get<task::Decimal>(rows[0][2]).digits, "68141.10");
  EXPECT_EQ(std::get<task::Decimal>(rows[1][2]).digits, "-12.50");
  EXPECT_EQ(std::get<bool>(rows[1][3]), true);
  EXPECT_EQ(std::get<task::Date>(rows[0][4]).day(), 29);
  EXPECT_EQ(std::get<task::DateTime>(rows[0][5]).epoch_ms,
            civil::DaysFromYmd(2026, 8, 3) * 86400000LL + 10 * 3600000LL);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(rows[2][5]));

  // What the provider was sent.
  auto requests = provider_.requests();
  ASSERT_EQ(requests.size(), 3u);
  for (const auto& t : provider_.tokens()) EXPECT_EQ(t, kToken);
  EXPECT_EQ(requests[0]["taskId"], "1900000000000000001");
  EXPECT_EQ(requests[0]["tenantId"], "1");
  EXPECT_EQ(requests[0]["appCode"], "PLATFORM");
  EXPECT_EQ(requests[0]["requestedBy"], "1900000000000000009");
  EXPECT_EQ(requests[0]["dispatchVersion"], 2);
  EXPECT_EQ(requests[0]["parameters"]["keyword"], "柏悦");
  EXPECT_EQ(requests[0]["limit"], 2);
  EXPECT_TRUE(requests[0]["cursor"].is_null());
  EXPECT_TRUE(requests[0]["snapshotToken"].is_null());
  EXPECT_EQ(requests[1]["cursor"], "2");
  EXPECT_EQ(requests[1]["snapshotToken"], "snap-1");
  EXPECT_EQ(requests[2]["cursor"], "4");
  EXPECT_EQ(requests[2]["snapshotToken"], "snap-1");

  auto after = source->NextPage();
  EXPECT_FALSE(after.ok());
}

TEST_F(ProviderBatchSourceTest, WrongTokenIsPermanent) {
  auto check_token = [](int, const json&, httplib::Response& res) {
    Fail(res, 401, "401", "invalid internal service token");
  };
  auto options = Options();
  options.service.internal_token = "wrong";
  Status s = RunWith(check_token, options);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_FALSE(s.IsTransient());
  EXPECT_NE(s.message().find("invalid internal service token"), std::string::npos);
  EXPECT_EQ(provider_.tokens().at(0), "wrong");

  // The house convention: HTTP 200 with the code in the envelope.
  s = RunWith([](int, const json&, httplib::Response& res) { Fail(res, 200, "401", "no"); });
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
}

TEST_F(ProviderBatchSourceTest, ServerErrorsAreTransient) {
  Status s = RunWith(
      [](int, const json&, httplib::Response& res) { Fail(res, 503, "503", "overloaded"); });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_TRUE(s.IsTransient());
  s = RunWith([](int, const json&, httplib::Response& res) { Fail(res, 200, "500", "db down"); });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  s = RunWith([](int, const json&, httplib::Response& res) { Fail(res, 200, "429", "slow down"); });
  EXPECT_TRUE(s.IsTransient()) << s.ToString();
}

TEST_F(ProviderBatchSourceTest, EnvelopeClientErrorsArePermanent) {
  Status s = RunWith([](int, const json&, httplib::Response& res) {
    Fail(res, 200, "400", "snapshotToken is invalid");
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("snapshotToken is invalid"), std::string::npos);
  s = RunWith([](int, const json&, httplib::Response& res) { Fail(res, 404, "404", "no type"); });
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  s = RunWith([](int, const json&, httplib::Response& res) { Fail(res, 200, "403", "merchant"); });
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
}

TEST_F(ProviderBatchSourceTest, HangHitsTheReadTimeout) {
  auto options = Options();
  options.client.read_timeout_ms = 200;
  auto start = std::chrono::steady_clock::now();
  Status s = RunWith(
      [](int, const json&, httplib::Response& res) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        Answer(res, Data({Row(1)}, false, nullptr));
      },
      options);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_LT(elapsed, std::chrono::milliseconds(1100));
}

TEST_F(ProviderBatchSourceTest, ConnectionRefusedIsTransient) {
  auto options = Options();
  options.service.base_url = "http://127.0.0.1:1";
  auto source = NewProviderBatchSource(options, http::HttplibClientFactory());
  Status s = Drain(*source);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
}

TEST_F(ProviderBatchSourceTest, OversizedBodyIsRejectedWhileReading) {
  auto options = Options();
  options.client.max_response_bytes = 1024;
  Status s = RunWith(
      [](int, const json&, httplib::Response& res) {
        json row = Row(1);
        row["name"] = std::string(4096, 'x');
        Answer(res, Data({row}, false, nullptr));
      },
      options);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("1024"), std::string::npos);

  // Without a Content-Length the count happens as bytes arrive.
  s = RunWith(
      [](int, const json&, httplib::Response& res) {
        res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
          std::string chunk(512, ' ');
          for (int i = 0; i < 64; ++i) {
            if (!sink.write(chunk.data(), chunk.size())) break;
          }
          sink.done();
          return true;
        });
      },
      options);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

TEST_F(ProviderBatchSourceTest, SchemaHashChangeIsPermanent) {
  Status s = RunWith([](int call, const json&, httplib::Response& res) {
    json d = Data({Row(call)}, call < 3, std::to_string(call), call == 1);
    if (call == 2) d["schemaHash"] = "sha256:other";
    Answer(res, d);
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("schemaHash"), std::string::npos);
}

TEST_F(ProviderBatchSourceTest, ColumnChangeIsPermanent) {
  Status s = RunWith([](int call, const json&, httplib::Response& res) {
    json d = Data({Row(call)}, call < 3, std::to_string(call), true);
    if (call == 2) d["columns"][1]["type"] = "INTEGER";
    Answer(res, d);
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

// Column options (docs/provider-contract.md#column-options): read in the
// task's language; a bad one is a permanent contract error naming the column;
// a later batch must repeat them exactly.
TEST_F(ProviderBatchSourceTest, ColumnOptionsAreReadInTheTasksLanguage) {
  provider_.OnBatch([](int, const json&, httplib::Response& res) {
    json d = Data({Row(1)}, false, nullptr);
    d["columns"][1]["title"] = {{"zh-CN", json::array({"客户", "公司名称"})},
                                {"en", json::array({"Customer", "Company"})}};
    d["columns"][1]["merge"] = "SAME_VALUE";
    d["columns"][3]["labels"] = {{"true", {{"zh-CN", "是"}, {"en", "Yes"}}}, {"false", "否"}};
    Answer(res, d);
  });
  ProviderBatchOptions options = Options();
  options.languages = {"en-US", "zh-CN"};
  auto source = NewProviderBatchSource(options, http::HttplibClientFactory());
  ASSERT_TRUE(source->NextPage().ok());
  const task::Column& name = source->columns()[1];
  EXPECT_EQ(name.title_groups, std::vector<std::string>{"Customer"});
  EXPECT_EQ(name.title, "Company");
  EXPECT_EQ(name.merge, task::MergeMode::kSameValue);
  EXPECT_EQ(source->columns()[3].labels,
            (std::vector<std::pair<std::string, std::string>>{{"false", "否"}, {"true", "Yes"}}));
}

TEST_F(ProviderBatchSourceTest, ABadColumnOptionFailsNamingTheColumn) {
  Status s = RunWith([](int, const json&, httplib::Response& res) {
    json d = Data({Row(1)}, false, nullptr);
    d["columns"][3]["labels"] = {{"true", 1}};
    Answer(res, d);
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "provider columns: column 4 'vip': the label of 'true' is not a string or a language "
            "object");
}

TEST_F(ProviderBatchSourceTest, AChangedColumnOptionIsAColumnChange) {
  Status s = RunWith([](int call, const json&, httplib::Response& res) {
    json d = Data({Row(call)}, call < 2, std::to_string(call), true);
    if (call == 2) d["columns"][1]["merge"] = "SAME_VALUE";
    Answer(res, d);
  });
  EXPECT_EQ(s.message(), "provider columns changed during the export");
}

TEST_F(ProviderBatchSourceTest, NonAdvancingCursorIsTransient) {
  Status s = RunWith([](int call, const json&, httplib::Response& res) {
    Answer(res, Data({Row(call)}, true, "7", call == 1));
  });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_EQ(provider_.requests().size(), 2u);

  s = RunWith(
      [](int, const json&, httplib::Response& res) { Answer(res, Data({Row(1)}, true, nullptr)); });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();

  // A cursor that cycles back is as stuck as one that stands still.
  s = RunWith([](int call, const json&, httplib::Response& res) {
    static const char* kCursors[] = {"a", "b", "a"};
    int i = (call - 1) % 3;
    Answer(res, Data({Row(1)}, true, kCursors[i], true));
  });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
}

TEST_F(ProviderBatchSourceTest, BadValueNamesRowColumnAndValue) {
  Status s = RunWith([](int call, const json&, httplib::Response& res) {
    if (call == 1) return Answer(res, Data({Row(1), Row(2)}, true, "2"));
    json bad = Row(4);
    bad["balance"] = "12,50";
    Answer(res, Data({Row(3), bad}, false, nullptr, false));
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("row 4"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("balance"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("12,50"), std::string::npos) << s.message();
}

// A long Chinese date in a DATE column (docs/provider-contract.md#error-classes). The message
// quotes it between characters, so it is valid UTF-8 wherever it is stored or sent.
TEST_F(ProviderBatchSourceTest, LongChineseValueFailsWithAValidUtf8Message) {
  std::string cjk;
  for (int i = 0; i < 6; ++i) cjk += "下单日期2026年12月1日";
  Status s = RunWith([&](int, const json&, httplib::Response& res) {
    json bad = Row(1);
    bad["balance"] = cjk;
    Answer(res, Data({bad}, false, nullptr));
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(utf8::IsValid(s.message())) << s.message();
  EXPECT_NE(s.message().find("balance"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("下单日期2026年12月1日"), std::string::npos) << s.message();
}

// JSON is UTF-8: an answer that is not is refused as a whole, and says so.
TEST_F(ProviderBatchSourceTest, AnswerThatIsNotUtf8IsAClearPermanentFailure) {
  Status s = RunWith([](int, const json&, httplib::Response& res) {
    std::string body =
        json{{"code", "200"}, {"message", "success"}, {"data", Data({Row(1)}, false, nullptr)}}
            .dump();
    const size_t at = body.find("\"success\"");
    body.replace(at + 1, 1, "\xFF");
    res.set_content(body, "application/json");
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("not valid UTF-8"), std::string::npos) << s.message();
}

// docs/fuzzing.md#nesting: a row value nested a million deep (2 MB of brackets) killed serve
// with SIGSEGV — nlohmann's dump() of the value, quoted in the type error,
// recursed once per level on the prefetch thread. The answer is refused
// before any parser builds a tree (common/nesting.h), a permanent contract
// error like any malformed answer; on both parsers' paths.
std::string WithValue(const json& data, const std::string& raw) {
  std::string body = json{{"code", "200"}, {"message", "success"}, {"data", data}}.dump();
  const std::string placeholder = "\"@VALUE@\"";
  body.replace(body.find(placeholder), placeholder.size(), raw);
  return body;
}

TEST_F(ProviderBatchSourceTest, AValueNestedAMillionDeepIsRefusedBeforeAnyTreeIsBuilt) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  for (const char* path : {"simdjson", "fallback"}) {
    for (int failing_call : {1, 2}) {
      int call = 0;  // this run's calls (the provider counts the fixture's)
      Status s = RunWith([&](int, const json&, httplib::Response& res) {
        ++call;
        json row = Row(call);
        row["name"] = "@VALUE@";
        // A number past 64 bits (in a key outside the columns) sends the
        // answer to the nlohmann fallback.
        if (std::string(path) == "fallback") row["extra"] = "@BIG@";
        std::string body = WithValue(Data({row}, call < 2, std::to_string(call), call == 1),
                                     call == failing_call ? deep : "\"fine\"");
        if (std::string(path) == "fallback") {
          body.replace(body.find("\"@BIG@\""), 7, "18446744073709551616");
        }
        res.set_content(body, "application/json");
      });
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << path << " " << s.ToString();
      EXPECT_EQ(s.message(), "provider answer: JSON nested deeper than 64 levels")
          << path << " call " << failing_call;
    }
  }
}

TEST_F(ProviderBatchSourceTest, BothParsersTakeTheBoundAndRefuseOneLevelMore) {
  // envelope › data › rows › row: 4 levels, so a cell 60 deep is exactly 64.
  for (const char* path : {"simdjson", "fallback"}) {
    for (int depth : {60, 61}) {
      Status s = RunWith([&](int, const json&, httplib::Response& res) {
        json row = Row(1);
        row["name"] = "@VALUE@";
        if (std::string(path) == "fallback") row["extra"] = "@BIG@";
        std::string body = WithValue(Data({row}, false, nullptr),
                                     std::string(depth, '[') + std::string(depth, ']'));
        if (std::string(path) == "fallback") {
          body.replace(body.find("\"@BIG@\""), 7, "18446744073709551616");
        }
        res.set_content(body, "application/json");
      });
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
      if (depth == 60) {
        // Read, then refused by type with the usual quoted excerpt (the dump
        // that quotes it recurses 60 frames, no more).
        EXPECT_NE(s.message().find("column 'name'"), std::string::npos) << path << s.message();
        EXPECT_NE(s.message().find("[[[["), std::string::npos) << path << s.message();
      } else {
        EXPECT_EQ(s.message(), "provider answer: JSON nested deeper than 64 levels") << path;
      }
    }
  }
}

TEST_F(ProviderBatchSourceTest, ADeepAnswerToAServerErrorStaysTransient) {
  Status s = RunWith([](int, const json&, httplib::Response& res) {
    res.status = 503;
    res.set_content(std::string(1000000, '[') + std::string(1000000, ']'), "application/json");
  });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
}

TEST_F(ProviderBatchSourceTest, TooManyRowsInOneBatch) {
  Status s = RunWith([](int, const json&, httplib::Response& res) {
    Answer(res, Data({Row(1), Row(2), Row(3)}, false, nullptr));
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("batch limit of 2"), std::string::npos);
}

TEST_F(ProviderBatchSourceTest, MaxRowsFailsBeforePassingTheLimit) {
  auto options = Options();
  options.max_rows = 3;
  provider_.OnBatch([](int call, const json&, httplib::Response& res) {
    Answer(res,
           Data({Row(call * 2 - 1), Row(call * 2)}, call < 5, std::to_string(call), call == 1));
  });
  auto source = NewProviderBatchSource(options, http::HttplibClientFactory());
  auto first = source->NextPage();
  ASSERT_TRUE(first.ok());
  auto second = source->NextPage();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(second.status().message().find("3"), std::string::npos);
}

TEST_F(ProviderBatchSourceTest, MalformedAnswersArePermanent) {
  auto plain = [](std::string body) {
    return [body](int, const json&, httplib::Response& res) {
      res.set_content(body, "application/json");
    };
  };
  EXPECT_EQ(RunWith(plain("not json")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RunWith(plain(R"({"code":"200","data":[]})")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RunWith(plain(R"({"message":"x"})")).code(), StatusCode::kInvalidArgument);
  // First batch without columns.
  Status s = RunWith([](int, const json&, httplib::Response& res) {
    Answer(res, Data({Row(1)}, false, nullptr, false));
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  // 101 columns.
  s = RunWith([](int, const json&, httplib::Response& res) {
    json d = Data({}, false, nullptr);
    for (int i = 0; i < 101; ++i) {
      d["columns"].push_back({{"key", "c" + std::to_string(i)}, {"type", "STRING"}});
    }
    Answer(res, d);
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  // Snapshot token over 512 characters.
  s = RunWith([](int, const json&, httplib::Response& res) {
    json d = Data({Row(1)}, false, nullptr);
    d["snapshotToken"] = std::string(513, 't');
    Answer(res, d);
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  // A row that is not an object.
  s = RunWith([](int, const json&, httplib::Response& res) {
    Answer(res, Data({json::array({1, 2})}, false, nullptr));
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

TEST_F(ProviderBatchSourceTest, FirstBatchWithoutASnapshotTokenIsAPermanentContractError) {
  for (const char* variant : {"missing", "null", "empty"}) {
    Status s = RunWith([variant](int, const json&, httplib::Response& res) {
      json d = Data({Row(1)}, false, nullptr);
      if (std::string(variant) == "missing") d.erase("snapshotToken");
      if (std::string(variant) == "null") d["snapshotToken"] = nullptr;
      if (std::string(variant) == "empty") d["snapshotToken"] = "";
      Answer(res, d);
    });
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << variant << ": " << s.ToString();
    EXPECT_NE(s.message().find("snapshotToken"), std::string::npos) << s.ToString();
  }
}

TEST_F(ProviderBatchSourceTest, UnknownKeysAreIgnoredAndMissingKeysAreEmpty) {
  provider_.OnBatch([](int, const json&, httplib::Response& res) {
    json row = Row(2);
    row["secretInternalField"] = "x";
    row.erase("vip");
    Answer(res, Data({row}, false, nullptr));
  });
  auto source = NewProviderBatchSource(Options(), http::HttplibClientFactory());
  auto page = source->NextPage();
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->rows.size(), 1u);
  ASSERT_EQ(page->rows[0].size(), 6u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(page->rows[0][3]));
}

// The answer is read with simdjson. Whatever the key order (rows before
// columns, as a Java serializer may write them) the rows come out alike, and
// a body simdjson refuses — a number past 64 bits — is judged by the
// nlohmann parser as before: a clear error naming row, column and value.
TEST_F(ProviderBatchSourceTest, RowsBeforeColumnsAndNumbersPast64BitsAreReadAsBefore) {
  provider_.OnBatch([](int, const json&, httplib::Response& res) {
    json d = Data({Row(1), Row(2)}, false, nullptr);
    std::string rows = d["rows"].dump();
    d.erase("rows");
    std::string rest = d.dump();
    res.set_content(R"({"data":{"rows":)" + rows + "," + rest.substr(1) +
                        R"(,"code":"200","message":"success"})",
                    "application/json");
  });
  auto page = NewProviderBatchSource(Options(), http::HttplibClientFactory())->NextPage();
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->rows.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(page->rows[1][0]), 1900000000000000002LL);
  EXPECT_EQ(std::get<task::Decimal>(page->rows[0][2]).digits, "68141.10");

  Status s = RunWith([](int, const json&, httplib::Response& res) {
    json d = Data({Row(1)}, false, nullptr);
    std::string body = json{{"code", "200"}, {"message", "success"}, {"data", d}}.dump();
    const std::string id = "\"1900000000000000001\"";
    body.replace(body.find(id), id.size(), "123456789012345678901234567890");
    res.set_content(body, "application/json");
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("row 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'id'"), std::string::npos) << s.message();
}

TEST_F(ProviderBatchSourceTest, MetricsHookSeesEveryCall) {
  auto options = Options();
  std::vector<ProviderBatchStats> seen;
  options.on_batch = [&](const ProviderBatchStats& s) { seen.push_back(s); };
  Status s = RunWith(
      [](int call, const json&, httplib::Response& res) {
        if (call == 1) return Answer(res, Data({Row(1), Row(2)}, true, "2"));
        Fail(res, 503, "503", "busy");
      },
      options);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].rows, 2);
  EXPECT_EQ(seen[0].code, StatusCode::kOk);
  EXPECT_GT(seen[0].response_bytes, 0);
  EXPECT_EQ(seen[1].code, StatusCode::kUnavailable);
  EXPECT_EQ(seen[0].export_type, "CUSTOMER_LIST");
}

// The same source on the scripted HttpClient fake (tests/fakes/): what goes
// out — one kept-alive client for the service, each call's bounds — and how
// each outcome the seam reports becomes the source's error, without a server.
TEST_F(ProviderBatchSourceTest, OnTheFakeClientEachCallCarriesItsBoundsAndOneClientServesAll) {
  const std::string first =
      json{{"code", "200"}, {"message", "success"}, {"data", Data({Row(1), Row(2)}, true, "2")}}
          .dump();
  const std::string last =
      json{{"code", "200"}, {"message", "success"}, {"data", Data({Row(3)}, false, nullptr)}}
          .dump();
  fakes::ScriptedHttpClientFactory http({{200, first}, {200, last}});
  auto options = Options();
  options.client.max_response_bytes = 100000;
  const auto before = std::chrono::steady_clock::now();
  auto source = NewProviderBatchSource(options, &http);
  int64_t rows = 0;
  ASSERT_TRUE(Drain(*source, &rows).ok());
  EXPECT_EQ(rows, 3);

  const auto opened = http.opened();
  ASSERT_EQ(opened.size(), 1u);  // one client, kept alive across the batches
  EXPECT_EQ(opened[0].base_url, provider_.base_url());
  EXPECT_EQ(opened[0].connect_timeout_ms, 1000);
  EXPECT_EQ(opened[0].read_timeout_ms, 2000);
  EXPECT_EQ(opened[0].write_timeout_ms, 2000);
  EXPECT_TRUE(opened[0].keep_alive);
  EXPECT_TRUE(opened[0].tcp_nodelay);
  EXPECT_TRUE(opened[0].tls.verify_server_certificate);

  const auto calls = http.calls();
  ASSERT_EQ(calls.size(), 2u);
  const http::ClientRequest& req = calls[0].request;
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.path, kPath);
  EXPECT_EQ(req.headers.Get("X-Internal-Service-Token"), kToken);
  EXPECT_EQ(req.headers.Get("Accept"), "application/json");
  EXPECT_EQ(req.content_type, "application/json");
  EXPECT_EQ(req.max_body_bytes, 100000);
  EXPECT_TRUE(req.read_body);
  // The whole answer within connect + 2 x read timeout of the call.
  ASSERT_TRUE(req.deadline.has_value());
  EXPECT_GE(*req.deadline, before + std::chrono::milliseconds(5000));
  EXPECT_LE(*req.deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(5000));
  EXPECT_EQ(json::parse(calls[1].request.body)["cursor"], "2");
}

TEST_F(ProviderBatchSourceTest, OnTheFakeClientEveryOutcomeKeepsItsErrorText) {
  auto run = [this](fakes::ScriptedAnswer answer) {
    fakes::ScriptedHttpClientFactory http({std::move(answer)});
    auto options = Options();
    options.client.max_response_bytes = 10;
    return NewProviderBatchSource(options, &http)->NextPage().status();
  };
  fakes::ScriptedAnswer refused;
  refused.error = http::ClientError::kConnection;
  refused.error_text = "Connection";
  Status s = run(refused);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "provider call failed: Connection");

  s = run({200, std::string(11, ' ')});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "provider response exceeds 10 bytes");

  fakes::ScriptedAnswer slow;
  slow.too_slow = true;
  s = run(slow);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "provider response took too long to arrive");

  // A 5xx counts before the cap: the service is down, not lying.
  s = run({503, std::string(11, ' ')});
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();

  fakes::ScriptedHttpClientFactory http(std::vector<fakes::ScriptedAnswer>{});
  http.FailOpens(InvalidArgument("not a valid base URL"));
  s = NewProviderBatchSource(Options(), &http)->NextPage().status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "provider base URL is not valid: " + provider_.base_url());
}

}  // namespace
}  // namespace export_center::source
