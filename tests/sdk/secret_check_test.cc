#include "sdk/secret_check.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sdk/provider_server.h"
#include "sdk/sql_scenario.h"

namespace export_center::sdk {
namespace {

constexpr char kToken[] = "secret-check-token-0123456789";

TEST(SecretProblem, EmptyShortOrAnUnresolvedPlaceholderIsRefused) {
  EXPECT_EQ(SecretProblem("", 16), "is empty");
  EXPECT_EQ(SecretProblem("short", 16), "is too short (5 bytes; at least 16)");
  // Exactly what a team got with `internal-token: ${EXPORT_CENTER_INTERNAL_TOKEN}` and the
  // variable unset: the literal text (31 bytes, long enough) became the token.
  EXPECT_EQ(SecretProblem("${EXPORT_CENTER_INTERNAL_TOKEN}", 16),
            "is the unresolved placeholder ${EXPORT_CENTER_INTERNAL_TOKEN}");
  EXPECT_EQ(SecretProblem("prefix-${X:default}-0123456789", 16),
            "contains an unresolved ${...} placeholder");
  EXPECT_EQ(SecretProblem("0123456789abcdef", 16), std::nullopt);
  EXPECT_EQ(SecretProblem("dollar-$-and-{brace}-are-fine", 16), std::nullopt);
  EXPECT_EQ(SecretProblem("0123456789abcdef0123456789abcde", kMinSnapshotSecretBytes),
            "is too short (31 bytes; at least 32)");
}

TEST(SecretProblem, RequireSecretNamesTheSetting) {
  try {
    RequireSecret("svc.internal-token", "${TOKEN}", 16);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "svc.internal-token is the unresolved placeholder ${TOKEN}");
  }
}

// The SDK refuses to serve either contract with a token that would let a
// caller in by guessing (or by sending the placeholder text).
TEST(SecretProblem, ContractsRefuseABadTokenAtRegistration) {
  for (const char* bad : {"", "short-token", "${EXPORT_CENTER_INTERNAL_TOKEN}"}) {
    httplib::Server server;
    EXPECT_THROW(RegisterBatchProviders(server, bad, {}), std::invalid_argument) << bad;
    EXPECT_THROW(RegisterSqlScenarios(server, bad, {}), std::invalid_argument) << bad;
  }
  httplib::Server server;
  EXPECT_NO_THROW(RegisterBatchProviders(server, kToken, {}));
  EXPECT_NO_THROW(RegisterSqlScenarios(server, kToken, {}));
}

TEST(SecretProblem, SnapshotSignerRefusesABadSecret) {
  for (const char* bad : {"", "snapshot-secret-0123456789", "${EXPORT_CENTER_SNAPSHOT_SECRET}"}) {
    EXPECT_THROW(SnapshotSigner{bad}, std::invalid_argument) << bad;
  }
  EXPECT_NO_THROW(SnapshotSigner{"snapshot-secret-0123456789abcdef0123"});
}

// Every refused call reaches the log, rate-limited: a missing and a wrong
// token on both routes, never the token's value.
TEST(SecretProblem, RefusedCallsAreLogged) {
  std::mutex mu;
  std::vector<std::string> lines;
  auto sink = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  };
  httplib::Server server;
  ProviderServerOptions batch;
  batch.refusal_log = sink;
  SqlScenarioServerOptions sql;
  sql.refusal_log = sink;
  RegisterBatchProviders(server, kToken, {}, batch);
  RegisterSqlScenarios(server, kToken, {}, sql);
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  httplib::Client client("127.0.0.1", port);
  auto none = client.Post("/internal/exports/v1/T/batches", "{}", "application/json");
  auto wrong = client.Post("/dispatch/sql?queryId=Q", {{kTokenHeader, "guess-0123456789abcdef"}},
                           "{}", "application/json");
  auto again = client.Post("/dispatch/sql?queryId=Q", {{kTokenHeader, "guess-0123456789abcdef"}},
                           "{}", "application/json");
  server.stop();
  thread.join();
  ASSERT_TRUE(none && wrong && again);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(wrong->status, 401);
  ASSERT_EQ(lines.size(), 2u);  // one per route's log; the third call is held back
  EXPECT_EQ(lines[0],
            "export-center sdk: refused contract call: POST /internal/exports/v1/T/batches from "
            "127.0.0.1: no X-Internal-Service-Token");
  EXPECT_EQ(lines[1],
            "export-center sdk: refused contract call: POST /dispatch/sql from 127.0.0.1: wrong "
            "X-Internal-Service-Token");
  for (const auto& line : lines) EXPECT_EQ(line.find("guess"), std::string::npos) << line;
}

}  // namespace
}  // namespace export_center::sdk
