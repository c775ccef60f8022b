#include "identity/token_verifier.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/digest.h"
#include "common/encoding.h"

namespace export_center::identity {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

constexpr char kSecret[] = "hs256-test-secret-0123456789abcdef";

int64_t Now() {
  return std::chrono::duration_cast<seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

IdentityOptions HsConfig() {
  IdentityOptions c;
  c.jwt_hs256_secret = kSecret;
  return c;
}

Principal Alice() { return {"alice", "t1", task::AppCode::kPlatform, {"customer:export"}}; }

json Claims(int64_t exp_offset = 3600) {
  return {{"sub", "alice"},
          {"tenant_id", "t1"},
          {"app_code", "PLATFORM"},
          {"perms", {"customer:export"}},
          {"exp", Now() + exp_offset}};
}

// Builds a token by hand so tests can break any part of it.
std::string Craft(const json& header, const json& claims, const std::string& key) {
  std::string signed_part = Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());
  return signed_part + "." + Base64UrlEncode(HmacSha256(key, signed_part));
}

std::unique_ptr<TokenVerifier> Verifier(const IdentityOptions& c) {
  auto v = TokenVerifier::Create(c);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return std::move(v).value();
}

// A fresh 2048-bit RSA key pair written as PEM files.
struct RsaFiles {
  std::string public_pem_path;
  std::string private_pem_path;
  std::string public_pem;
};

RsaFiles MakeRsaFiles(const std::string& name) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  RsaFiles files{testing::TempDir() + name + "_pub.pem", testing::TempDir() + name + "_key.pem",
                 ""};
  FILE* f = std::fopen(files.public_pem_path.c_str(), "w");
  PEM_write_PUBKEY(f, key);
  std::fclose(f);
  f = std::fopen(files.private_pem_path.c_str(), "w");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  EVP_PKEY_free(key);
  std::ifstream in(files.public_pem_path);
  files.public_pem.assign(std::istreambuf_iterator<char>(in), {});
  return files;
}

TEST(Base64Url, RoundTripsAndIsStrict) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00\x01"}) {
    auto back = Base64UrlDecode(Base64UrlEncode(s));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_FALSE(Base64UrlDecode("Zm9v=").has_value());  // padding
  EXPECT_FALSE(Base64UrlDecode("+/8").has_value());    // standard alphabet
  EXPECT_FALSE(Base64UrlDecode("Zm9 v").has_value());  // whitespace
  EXPECT_FALSE(Base64UrlDecode("Z").has_value());      // impossible length
  EXPECT_FALSE(Base64UrlDecode("Zh").has_value());     // non-zero unused bits
  EXPECT_TRUE(Base64UrlDecode("Zg").has_value());
}

TEST(Auth, MintedHs256TokenVerifies) {
  auto token = MintToken(HsConfig(), Alice(), seconds(600));
  ASSERT_TRUE(token.ok());
  auto p = Verifier(HsConfig())->Authenticate("Bearer " + *token);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->user, "alice");
  EXPECT_EQ(p->tenant, "t1");
  EXPECT_EQ(p->app, task::AppCode::kPlatform);
  EXPECT_TRUE(p->HasPerm("customer:export"));
  EXPECT_FALSE(p->HasPerm("platform:download:all"));
}

TEST(Auth, SchemeIsCaseInsensitiveButRequired) {
  auto token = MintToken(HsConfig(), Alice(), seconds(600));
  auto v = Verifier(HsConfig());
  EXPECT_TRUE(v->Authenticate("bearer " + *token).ok());
  EXPECT_FALSE(v->Authenticate(*token).ok());
  EXPECT_FALSE(v->Authenticate("Basic " + *token).ok());
  EXPECT_FALSE(v->Authenticate("").ok());
  EXPECT_FALSE(v->Authenticate("Bearer ").ok());
  EXPECT_EQ(v->Authenticate("").status().code(), StatusCode::kUnauthenticated);
}

TEST(Auth, ExpiredTokenIsRejected) {
  auto token = MintToken(HsConfig(), Alice(), seconds(-31));  // past the default 30 s leeway
  auto p = Verifier(HsConfig())->Authenticate("Bearer " + *token);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(p.status().message().find("expired"), std::string::npos);
}

TEST(Auth, ExpIsRequired) {
  json claims = Claims();
  claims.erase("exp");
  auto v = Verifier(HsConfig());
  EXPECT_FALSE(v->Verify(Craft({{"alg", "HS256"}}, claims, kSecret), Now()).ok());
  claims["exp"] = "9999999999";
  EXPECT_FALSE(v->Verify(Craft({{"alg", "HS256"}}, claims, kSecret), Now()).ok());
}

TEST(Auth, ForgedSignatureIsRejected) {
  auto v = Verifier(HsConfig());
  EXPECT_FALSE(v->Verify(Craft({{"alg", "HS256"}}, Claims(), "another-secret"), Now()).ok());
  // A valid signature from one token grafted onto other claims.
  std::string good = Craft({{"alg", "HS256"}}, Claims(), kSecret);
  json elevated = Claims();
  elevated["perms"] = {"platform:download:all"};
  std::string forged = Base64UrlEncode(json{{"alg", "HS256"}}.dump()) + "." +
                       Base64UrlEncode(elevated.dump()) + good.substr(good.rfind('.'));
  EXPECT_FALSE(v->Verify(forged, Now()).ok());
}

TEST(Auth, AlgNoneIsRejected) {
  std::string unsigned_token =
      Base64UrlEncode(json{{"alg", "none"}}.dump()) + "." + Base64UrlEncode(Claims().dump()) + ".";
  auto p = Verifier(HsConfig())->Verify(unsigned_token, Now());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnauthenticated);
  EXPECT_FALSE(
      Verifier(HsConfig())->Verify(Craft({{"alg", "None"}}, Claims(), kSecret), Now()).ok());
}

TEST(Auth, UnknownAlgAndCritAreRejected) {
  auto v = Verifier(HsConfig());
  EXPECT_FALSE(v->Verify(Craft({{"alg", "HS512"}}, Claims(), kSecret), Now()).ok());
  EXPECT_FALSE(
      v->Verify(Craft({{"alg", "HS256"}, {"crit", {"b64"}}}, Claims(), kSecret), Now()).ok());
  EXPECT_TRUE(v->Verify(Craft({{"alg", "HS256"}, {"typ", "JWT"}}, Claims(), kSecret), Now()).ok());
}

TEST(Auth, MalformedTokensAreRejected) {
  auto v = Verifier(HsConfig());
  std::string good = Craft({{"alg", "HS256"}}, Claims(), kSecret);
  EXPECT_TRUE(v->Verify(good, Now()).ok());
  EXPECT_FALSE(v->Verify("a.b", Now()).ok());
  EXPECT_FALSE(v->Verify(good + ".x", Now()).ok());
  EXPECT_FALSE(v->Verify(good + "=", Now()).ok());
  EXPECT_FALSE(v->Verify("x" + good, Now()).ok());
  EXPECT_FALSE(v->Verify(std::string(10000, 'a'), Now()).ok());
}

TEST(Auth, ClaimsAreChecked) {
  auto v = Verifier(HsConfig());
  auto with = [&](const char* name, json value) {
    json c = Claims();
    if (value.is_discarded()) {
      c.erase(name);
    } else {
      c[name] = value;
    }
    return v->Verify(Craft({{"alg", "HS256"}}, c, kSecret), Now());
  };
  json gone(json::value_t::discarded);
  EXPECT_FALSE(with("sub", gone).ok());
  EXPECT_FALSE(with("sub", "").ok());
  EXPECT_FALSE(with("tenant_id", 42).ok());
  EXPECT_FALSE(with("tenant_id", gone).ok());
  EXPECT_FALSE(with("app_code", "platform").ok());
  EXPECT_FALSE(with("app_code", "ADMIN").ok());
  EXPECT_FALSE(with("perms", "customer:export").ok());
  EXPECT_FALSE(with("perms", json::array({1})).ok());
  EXPECT_FALSE(with("nbf", Now() + 3600).ok());
  auto merchant = with("app_code", "MERCHANT");
  ASSERT_TRUE(merchant.ok());
  EXPECT_EQ(merchant->app, task::AppCode::kMerchant);
  auto no_perms = with("perms", gone);
  ASSERT_TRUE(no_perms.ok());
  EXPECT_TRUE(no_perms->perms.empty());
}

// ---- issuer, audience and clock-skew leeway (docs/http-api.md#authentication)

IdentityOptions IssuerConfig(int leeway = 30) {
  IdentityOptions c = HsConfig();
  c.jwt_issuer = "https://sso.example.com";
  c.jwt_audience = "export-center";
  c.jwt_leeway_seconds = leeway;
  return c;
}

json IssuedClaims() {
  json c = Claims();
  c["iss"] = "https://sso.example.com";
  c["aud"] = "export-center";
  return c;
}

StatusOr<Principal> VerifyAt(const IdentityOptions& config, const json& claims, int64_t now) {
  return Verifier(config)->Verify(Craft({{"alg", "HS256"}}, claims, kSecret), now);
}

TEST(AuthIssuer, WrongOrMissingIssuerIsRefused) {
  json c = IssuedClaims();
  ASSERT_TRUE(VerifyAt(IssuerConfig(), c, Now()).ok());
  c["iss"] = "https://other.example.com";
  auto wrong = VerifyAt(IssuerConfig(), c, Now());
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(wrong.status().message().find("issuer"), std::string::npos);
  c["iss"] = json::array({"https://sso.example.com"});
  EXPECT_FALSE(VerifyAt(IssuerConfig(), c, Now()).ok());
  c.erase("iss");
  EXPECT_FALSE(VerifyAt(IssuerConfig(), c, Now()).ok());
  // Not configured (a verifier built in code): not checked.
  EXPECT_TRUE(VerifyAt(HsConfig(), c, Now()).ok());
}

TEST(AuthAudience, WrongOrMissingAudienceIsRefused) {
  json c = IssuedClaims();
  c["aud"] = "another-service";
  auto wrong = VerifyAt(IssuerConfig(), c, Now());
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("audience"), std::string::npos);
  c["aud"] = json::array({"another-service", "reports"});
  EXPECT_FALSE(VerifyAt(IssuerConfig(), c, Now()).ok());
  c["aud"] = json::array();
  EXPECT_FALSE(VerifyAt(IssuerConfig(), c, Now()).ok());
  c["aud"] = 7;
  EXPECT_FALSE(VerifyAt(IssuerConfig(), c, Now()).ok());
  c.erase("aud");
  EXPECT_FALSE(VerifyAt(IssuerConfig(), c, Now()).ok());
}

TEST(AuthAudience, ArrayHoldingOursIsAccepted) {
  json c = IssuedClaims();
  c["aud"] = json::array({"reports", "export-center"});
  EXPECT_TRUE(VerifyAt(IssuerConfig(), c, Now()).ok());
  c["aud"] = json::array({"export-center"});
  EXPECT_TRUE(VerifyAt(IssuerConfig(), c, Now()).ok());
  // A non-string element beside ours does not spoil it.
  c["aud"] = json::array({1, "export-center"});
  EXPECT_TRUE(VerifyAt(IssuerConfig(), c, Now()).ok());
}

TEST(AuthLeeway, ExpWithinLeewayIsAcceptedBeyondIsRefused) {
  const int64_t now = Now();
  json c = IssuedClaims();
  c["exp"] = now - 20;  // 20 s ago: inside the default 30 s
  auto within = VerifyAt(IssuerConfig(), c, now);
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  // The principal carries the instant the token stops verifying.
  EXPECT_EQ(within->valid_until_ms, (now + 10) * 1000);
  c["exp"] = now - 30;  // exactly exp + leeway: refused
  auto beyond = VerifyAt(IssuerConfig(), c, now);
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.status().message().find("expired"), std::string::npos);
  c["exp"] = now - 1;
  EXPECT_FALSE(VerifyAt(IssuerConfig(/*leeway=*/0), c, now).ok());
  c["exp"] = now + 1;
  auto zero = VerifyAt(IssuerConfig(/*leeway=*/0), c, now);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->valid_until_ms, (now + 1) * 1000);
}

TEST(AuthLeeway, NbfHonoursLeeway) {
  const int64_t now = Now();
  json c = IssuedClaims();
  c["nbf"] = now + 25;
  EXPECT_TRUE(VerifyAt(IssuerConfig(), c, now).ok());
  c["nbf"] = now + 31;
  auto early = VerifyAt(IssuerConfig(), c, now);
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.status().message().find("not yet valid"), std::string::npos);
  c["nbf"] = now + 1;
  EXPECT_FALSE(VerifyAt(IssuerConfig(/*leeway=*/0), c, now).ok());
  c["nbf"] = "soon";
  EXPECT_FALSE(VerifyAt(IssuerConfig(), c, now).ok());
}

TEST(AuthLeeway, IatInTheFutureBeyondLeewayIsRefused) {
  const int64_t now = Now();
  json c = IssuedClaims();
  c["iat"] = now + 30;
  EXPECT_TRUE(VerifyAt(IssuerConfig(), c, now).ok());
  c["iat"] = now + 31;
  auto future = VerifyAt(IssuerConfig(), c, now);
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(future.status().message().find("future"), std::string::npos);
  c["iat"] = now - 86400;  // long ago is fine: exp decides
  EXPECT_TRUE(VerifyAt(IssuerConfig(), c, now).ok());
  c["iat"] = "now";
  EXPECT_FALSE(VerifyAt(IssuerConfig(), c, now).ok());
}

TEST(AuthIssuer, MintedTokenCarriesTheConfiguredIssuerAndAudience) {
  auto token = MintToken(IssuerConfig(), Alice(), seconds(600));
  ASSERT_TRUE(token.ok());
  EXPECT_TRUE(Verifier(IssuerConfig())->Authenticate("Bearer " + *token).ok());
  IdentityOptions other = IssuerConfig();
  other.jwt_audience = "reports";
  EXPECT_FALSE(Verifier(other)->Authenticate("Bearer " + *token).ok());
}

TEST(Auth, DuplicateClaimsAreRejected) {
  std::string header = Base64UrlEncode(R"({"alg":"HS256"})");
  std::string claims = Base64UrlEncode(R"({"sub":"alice","sub":"root","tenant_id":"t1",)"
                                       R"("app_code":"PLATFORM","exp":99999999999})");
  std::string signed_part = header + "." + claims;
  std::string token = signed_part + "." + Base64UrlEncode(HmacSha256(kSecret, signed_part));
  EXPECT_FALSE(Verifier(HsConfig())->Verify(token, Now()).ok());
}

TEST(Auth, Rs256RoundTrip) {
  RsaFiles keys = MakeRsaFiles("rs256_round_trip");
  IdentityOptions c;
  c.jwt_rs256_public_key_file = keys.public_pem_path;
  c.jwt_rs256_private_key_file = keys.private_pem_path;
  auto token = MintToken(c, Alice(), seconds(600));
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  auto header = json::parse(*Base64UrlDecode(token->substr(0, token->find('.'))));
  EXPECT_EQ(header["alg"], "RS256");
  auto p = Verifier(c)->Authenticate("Bearer " + *token);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->user, "alice");

  RsaFiles other = MakeRsaFiles("rs256_other");
  IdentityOptions wrong;
  wrong.jwt_rs256_public_key_file = other.public_pem_path;
  EXPECT_FALSE(Verifier(wrong)->Authenticate("Bearer " + *token).ok());
}

TEST(Auth, Hs256IsRefusedWhenOnlyRs256IsConfigured) {
  // The classic confusion attack: HMAC keyed with the (public) RSA key.
  RsaFiles keys = MakeRsaFiles("rs256_confusion");
  IdentityOptions c;
  c.jwt_rs256_public_key_file = keys.public_pem_path;
  auto v = Verifier(c);
  EXPECT_TRUE(v->rs256_enabled());
  EXPECT_FALSE(v->hs256_enabled());
  auto p = v->Verify(Craft({{"alg", "HS256"}}, Claims(), keys.public_pem), Now());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnauthenticated);
}

TEST(Auth, ConfigErrors) {
  EXPECT_FALSE(TokenVerifier::Create(IdentityOptions{}).ok());
  IdentityOptions missing;
  missing.jwt_rs256_public_key_file = "/nonexistent/key.pem";
  EXPECT_FALSE(TokenVerifier::Create(missing).ok());
  EXPECT_FALSE(MintToken(IdentityOptions{}, Alice(), seconds(60)).ok());
}

}  // namespace
}  // namespace export_center::identity
