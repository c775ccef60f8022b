// One webhook delivery (notify/webhook_sender.h) on the scripted HttpClient
// fake: what goes out to the receiver's origin, that the body of the answer
// is never read, and the error texts last_error records.

#include "notify/webhook_sender.h"

#include <gtest/gtest.h>

#include "tests/fakes/scripted_http_client.h"

namespace export_center::notify {
namespace {

TEST(PostWebhookTest, PostsToTheUrlsOriginWithItsTimeoutsAndReadsOnlyTheStatus) {
  fakes::ScriptedHttpClientFactory http({{204, "an endless body"}});
  WebhookAnswer answer = PostWebhook(&http, "https://hooks.example:8443/in/exports?x=1",
                                     {{"X-Event-Id", "e-1"}}, R"({"taskId":"7"})", 1500, 4000);
  EXPECT_TRUE(answer.answered);
  EXPECT_EQ(answer.status, 204);
  EXPECT_TRUE(answer.error.empty());

  const auto opened = http.opened();
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].base_url, "https://hooks.example:8443");
  EXPECT_EQ(opened[0].connect_timeout_ms, 1500);
  EXPECT_EQ(opened[0].read_timeout_ms, 4000);
  EXPECT_EQ(opened[0].write_timeout_ms, 4000);
  EXPECT_FALSE(opened[0].keep_alive);
  EXPECT_TRUE(opened[0].tls.verify_server_certificate);
  const auto calls = http.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].request.method, "POST");
  EXPECT_EQ(calls[0].request.path, "/in/exports?x=1");
  EXPECT_EQ(calls[0].request.headers.Get("X-Event-Id"), "e-1");
  EXPECT_EQ(calls[0].request.content_type, "application/json");
  EXPECT_EQ(calls[0].request.body, R"({"taskId":"7"})");
  EXPECT_FALSE(calls[0].request.read_body);
}

TEST(PostWebhookTest, NoAnswerAndAnUnusableUrlSayWhy) {
  fakes::ScriptedAnswer timed_out;
  timed_out.error = http::ClientError::kRead;
  timed_out.error_text = "Read";
  fakes::ScriptedHttpClientFactory http({timed_out});
  WebhookAnswer answer = PostWebhook(&http, "http://127.0.0.1:9/hook", {}, "{}", 100, 100);
  EXPECT_FALSE(answer.answered);
  EXPECT_EQ(answer.error, "no answer: Read error");

  http.FailOpens(InvalidArgument("not a valid base URL"));
  answer = PostWebhook(&http, "http://127.0.0.1:9/hook", {}, "{}", 100, 100);
  EXPECT_FALSE(answer.answered);
  EXPECT_EQ(answer.error, "invalid receiver URL");
}

}  // namespace
}  // namespace export_center::notify
