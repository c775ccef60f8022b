// Signed download links (api/download_token.h) and the download audit's header values
// (api/download_audit.h).

#include "api/download_token.h"

#include <gtest/gtest.h>

#include <string>

#include "api/download_audit.h"

namespace export_center::api {
namespace {

TEST(DownloadToken, RoundTrip) {
  DownloadGrant g{7205759403792793601, "t1", "alice", 1714552200123};
  std::string token = SignDownloadGrant("dl-secret", g);
  auto back = OpenDownloadGrant("dl-secret", token);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->task_id, g.task_id);
  EXPECT_EQ(back->tenant, "t1");
  EXPECT_EQ(back->user, "alice");
  EXPECT_EQ(back->expires_at_ms, g.expires_at_ms);
  EXPECT_EQ(back->permission, "");
}

TEST(DownloadToken, CarriesTheSignersPermission) {
  DownloadGrant g{42, "t1", "alice", 1714552200123, "customer:export"};
  auto back = OpenDownloadGrant("dl-secret", SignDownloadGrant("dl-secret", g));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->permission, "customer:export");
}

TEST(DownloadAudit, IsoTimesParseStrictly) {
  EXPECT_EQ(ParseIsoMillis("2024-05-01T08:30:00.123Z"), 1714552200123);
  EXPECT_EQ(ParseIsoMillis("2024-05-01T08:30:00Z"), 1714552200000);
  EXPECT_EQ(ParseIsoMillis("1970-01-01T00:00:00.000Z"), 0);
  for (const char* bad : {"2024-05-01", "2024-05-01T08:30:00", "2024-05-01T08:30:00+08:00",
                          "2024-02-30T00:00:00Z", "2024-05-01T24:00:00Z", "2024-13-01T00:00:00Z",
                          "2024-05-01T08:30:00.12Z", " 2024-05-01T08:30:00Z", ""}) {
    EXPECT_FALSE(ParseIsoMillis(bad).has_value()) << bad;
  }
}

TEST(DownloadAudit, HeaderValuesKeepPrintableAsciiOnly) {
  EXPECT_EQ(PrintableAscii("curl/8.0", 512), "curl/8.0");
  EXPECT_EQ(PrintableAscii("a\tb\xe6\xb5\x8b", 512), "a?b???");
  EXPECT_EQ(PrintableAscii(std::string(600, 'x'), 512).size(), 512u);
}

TEST(DownloadToken, ForgeriesAreRefused) {
  DownloadGrant g{42, "t1", "alice", 1714552200123};
  std::string token = SignDownloadGrant("dl-secret", g);
  EXPECT_EQ(OpenDownloadGrant("other-secret", token).status().code(),
            StatusCode::kPermissionDenied);
  DownloadGrant later = g;
  later.expires_at_ms += 86400000;
  std::string extended = SignDownloadGrant("attacker", later);
  std::string grafted = extended.substr(0, extended.find('.')) + token.substr(token.find('.'));
  EXPECT_FALSE(OpenDownloadGrant("dl-secret", grafted).ok());
  EXPECT_FALSE(OpenDownloadGrant("dl-secret", "garbage").ok());
  EXPECT_FALSE(OpenDownloadGrant("dl-secret", token + "A").ok());
  EXPECT_FALSE(OpenDownloadGrant("dl-secret", "").ok());
}

}  // namespace
}  // namespace export_center::api
