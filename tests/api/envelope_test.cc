#include "api/envelope.h"

#include <gtest/gtest.h>

#include "api/task_json.h"
#include "common/time_format.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;

TEST(Envelope, MapsEveryStatusCode) {
  EXPECT_EQ(EnvelopeCode(StatusCode::kOk), 200);
  EXPECT_EQ(EnvelopeCode(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(EnvelopeCode(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(EnvelopeCode(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(EnvelopeCode(StatusCode::kNotFound), 404);
  EXPECT_EQ(EnvelopeCode(StatusCode::kConflict), 409);
  EXPECT_EQ(EnvelopeCode(StatusCode::kLimitExceeded), 429);
  EXPECT_EQ(EnvelopeCode(StatusCode::kUnavailable), 500);
  EXPECT_EQ(EnvelopeCode(StatusCode::kDeadlineExceeded), 500);
  EXPECT_EQ(EnvelopeCode(StatusCode::kCancelled), 500);
  EXPECT_EQ(EnvelopeCode(StatusCode::kInternal), 500);
}

TEST(Envelope, SuccessShape) {
  json e = SuccessEnvelope({{"id", Int64String(9007199254740993)}});
  EXPECT_EQ(e["code"], "200");
  EXPECT_EQ(e["message"], "success");
  EXPECT_EQ(e["data"]["id"], "9007199254740993");
}

TEST(Envelope, ErrorShapeCarriesTheCodeAsString) {
  json e = ErrorEnvelope(InvalidArgument("taskName must be 1-100 characters"));
  EXPECT_EQ(e["code"], "400");
  EXPECT_EQ(e["message"], "taskName must be 1-100 characters");
  EXPECT_TRUE(e["data"].is_null());
}

TEST(Envelope, UnavailableGetsARetryHintAndNoDetail) {
  json e = ErrorEnvelope(Unavailable("could not connect to server at db-7.internal:5432"));
  EXPECT_EQ(e["code"], "500");
  const std::string message = e["message"];
  EXPECT_NE(message.find("retry"), std::string::npos);
  EXPECT_EQ(message.find("db-7.internal"), std::string::npos) << message;
}

TEST(Envelope, RequestErrorsNameTheRequestIdNotTheDetail) {
  http::HttpResponse res;
  res.SetHeader("X-Request-Id", "req-42");
  WriteStatus(res, Internal("duplicate key value violates unique constraint \"uk_export_task\""));
  const std::string message = json::parse(res.body)["message"];
  EXPECT_EQ(message, "internal error; please contact support (request req-42)");

  http::HttpResponse dl;
  dl.SetHeader("X-Request-Id", "req-43");
  WriteHttpStatus(dl, Unavailable("PQ: server closed the connection, host 10.0.0.7"));
  EXPECT_EQ(dl.status, 500);
  const std::string dl_message = json::parse(dl.body)["message"];
  EXPECT_EQ(dl_message.find("10.0.0.7"), std::string::npos) << dl_message;
  EXPECT_NE(dl_message.find("(request req-43)"), std::string::npos) << dl_message;

  http::HttpResponse bad;
  bad.SetHeader("X-Request-Id", "req-44");
  WriteStatus(bad, InvalidArgument("taskName must be 1-100 characters"));
  EXPECT_EQ(json::parse(bad.body)["message"], "taskName must be 1-100 characters");
}

TEST(Envelope, InternalDetailsStayOutOfTheMessage) {
  json e = ErrorEnvelope(Internal("SQL error near SELECT at /var/db"));
  EXPECT_EQ(e["code"], "500");
  EXPECT_EQ(e["message"].get<std::string>().find("SQL"), std::string::npos);
}

TEST(Envelope, WritersSetHttpStatus) {
  http::HttpResponse res;
  WriteStatus(res, NotFound("export task 5 not found"));
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(json::parse(res.body)["code"], "404");
  EXPECT_EQ(res.Header("Content-Type"), "application/json; charset=utf-8");

  http::HttpResponse dl;
  WriteHttpStatus(dl, Unauthenticated("token expired"));
  EXPECT_EQ(dl.status, 401);
  EXPECT_EQ(json::parse(dl.body)["code"], "401");

  http::HttpResponse gone;
  WriteHttpError(gone, 410, "expired");
  EXPECT_EQ(gone.status, 410);
  EXPECT_EQ(json::parse(gone.body)["code"], "410");
}

TEST(Envelope, BodyStartsWithTheCode) {
  // The access log reads the code from the start of the body.
  http::HttpResponse res;
  WriteSuccess(res, json::object());
  EXPECT_EQ(res.body.rfind("{\"code\":\"200\"", 0), 0u);
}

TEST(TaskJson, FormatsIsoMillisUtc) {
  EXPECT_EQ(FormatIsoMillis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIsoMillis(1714552200123), "2024-05-01T08:30:00.123Z");
}

TEST(TaskJson, SixtyFourBitValuesAreStrings) {
  task::Task t;
  t.id = 7205759403792793601;
  t.export_type = "CUSTOMER_LIST";
  t.task_name = "客户列表";
  t.parameters_json = R"({"keyword":"柏悦"})";
  t.processed_rows = 50;
  t.total_rows = 200;
  t.size_bytes = 12345;
  t.status = task::TaskState::kRunning;
  t.requested_at = 1714552200123;
  json j = TaskToJson(t);
  EXPECT_EQ(j["id"], "7205759403792793601");
  EXPECT_EQ(j["processedRows"], "50");
  EXPECT_EQ(j["totalRows"], "200");
  EXPECT_EQ(j["sizeBytes"], "12345");
  EXPECT_EQ(j["downloadCount"], "0");
  EXPECT_EQ(j["progress"], 25);
  EXPECT_EQ(j["parameters"]["keyword"], "柏悦");
  EXPECT_EQ(j["requestedAt"], "2024-05-01T08:30:00.123Z");
  EXPECT_TRUE(j["startedAt"].is_null());
  EXPECT_TRUE(j["fileName"].is_null());
  EXPECT_EQ(j["status"], "RUNNING");
  EXPECT_EQ(j["format"], "XLSX");
}

TEST(TaskJson, ProgressIsNullUntilTheTotalIsKnown) {
  task::Task t;
  t.processed_rows = 10;
  EXPECT_TRUE(TaskToJson(t)["progress"].is_null());
  t.status = task::TaskState::kSucceeded;
  EXPECT_EQ(TaskToJson(t)["progress"], 100);
}

}  // namespace
}  // namespace export_center::api
