#include "task/command.h"

#include <gtest/gtest.h>

namespace export_center::task {
namespace {

Command Sample() {
  Command c;
  c.event_id = "7f1d5e2a-1111-4c3b-9a55-000000000001";
  c.task_id = 1900000000000000001LL;
  c.export_type = "CUSTOMER_LIST";
  c.dispatch_version = 3;
  c.occurred_at = "2026-08-03T10:00:00Z";
  c.trace_id = "trace-1";
  return c;
}

TEST(Command, RoundTrip) {
  Command c = Sample();
  auto decoded = DecodeCommand(EncodeCommand(c));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->schema_version, kCommandSchemaVersion);
  EXPECT_EQ(decoded->event_id, c.event_id);
  EXPECT_EQ(decoded->task_id, c.task_id);
  EXPECT_EQ(decoded->export_type, c.export_type);
  EXPECT_EQ(decoded->dispatch_version, 3);
  EXPECT_EQ(decoded->occurred_at, c.occurred_at);
  EXPECT_EQ(decoded->trace_id, c.trace_id);
}

TEST(Command, TaskIdTravelsAsString) {
  std::string payload = EncodeCommand(Sample());
  EXPECT_NE(payload.find("\"taskId\":\"1900000000000000001\""), std::string::npos) << payload;
}

TEST(Command, Properties) {
  auto props = PropertiesOf(Sample());
  EXPECT_EQ(props.at(std::string(kPropTaskId)), "1900000000000000001");
  EXPECT_EQ(props.at(std::string(kPropDispatchVersion)), "3");
  EXPECT_EQ(props.at(std::string(kPropEventId)), Sample().event_id);
  EXPECT_EQ(props.at(std::string(kPropSchemaVersion)), "1");
}

TEST(Command, OptionalFieldsMayBeAbsent) {
  auto d = DecodeCommand(
      R"({"schemaVersion":1,"eventId":"e","taskId":"12","exportType":"T","dispatchVersion":1})");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->task_id, 12);
  EXPECT_TRUE(d->trace_id.empty());
}

TEST(Command, PoisonPayloadsAreRejected) {
  const char* poison[] = {
      "",
      "not json",
      "[]",
      "null",
      "{\"schemaVersion\":1",
      R"({"schemaVersion":2,"eventId":"e","taskId":"12","exportType":"T","dispatchVersion":1})",
      R"({"schemaVersion":"1","eventId":"e","taskId":"12","exportType":"T","dispatchVersion":1})",
      R"({"eventId":"e","taskId":"12","exportType":"T","dispatchVersion":1})",
      R"({"schemaVersion":1,"taskId":"12","exportType":"T","dispatchVersion":1})",
      R"({"schemaVersion":1,"eventId":"","taskId":"12","exportType":"T","dispatchVersion":1})",
      R"({"schemaVersion":1,"eventId":"e","taskId":12,"exportType":"T","dispatchVersion":1})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"012","exportType":"T","dispatchVersion":1})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"-5","exportType":"T","dispatchVersion":1})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"99999999999999999999","exportType":"T","dispatchVersion":1})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"12","dispatchVersion":1})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"12","exportType":7,"dispatchVersion":1})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"12","exportType":"T","dispatchVersion":0})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"12","exportType":"T","dispatchVersion":"1"})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"12","exportType":"T","dispatchVersion":4294967296})",
      R"({"schemaVersion":1,"eventId":"e","taskId":"12","exportType":"T","dispatchVersion":1.5})",
  };
  for (const char* p : poison) {
    auto d = DecodeCommand(p);
    EXPECT_FALSE(d.ok()) << p;
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << p;
    }
  }
}

// docs/fuzzing.md#nesting: a command message is foreign bytes (a broker's, an embedded
// channel's row). Nested a million deep it is refused before a tree exists
// (common/nesting.h), in a field the decoder never reads as much as in one
// it does, and the consumer treats it as any poison message.
TEST(Command, AMessageNestedAMillionDeepIsRefused) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  for (
      const std::string& payload :
      {R"({"schemaVersion":1,"eventId":"e","taskId":"12","exportType":"T","dispatchVersion":1,"x":)" +
           deep + "}",
       R"({"schemaVersion":1,"eventId":)" + deep + "}", std::string(1000000, '{')}) {
    auto d = DecodeCommand(payload);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(d.status().message(), "command: JSON nested deeper than 64 levels");
  }
}

}  // namespace
}  // namespace export_center::task
