// Key selection (identity/jwt_keys.h) and JWKS-signed tokens through TokenVerifier:
// RS256 and ES256 keys made and used for signing by libcjose, a JWKS file, and
// a JWKS URL answered by a scripted client (rotation, unknown kid and its rate
// limit, fetch failures keeping the keys, size cap, max age).

#include "identity/jwt_keys.h"

#include <cjose/jwk.h>
#include <cjose/jws.h>
#include <gtest/gtest.h>
#include <jansson.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "identity/token_verifier.h"
#include "tests/fakes/scripted_http_client.h"

namespace export_center::identity {
namespace {

using json = nlohmann::json;
using fakes::ScriptedAnswer;
using fakes::ScriptedHttpClientFactory;

constexpr int64_t kNow = 1800000000;

struct SigningKey {
  std::string alg;
  std::string kid;
  std::shared_ptr<cjose_jwk_t> jwk;

  json PublicJwk() const {
    cjose_err err{};
    char* text = cjose_jwk_to_json(jwk.get(), /*priv=*/false, &err);
    json out = json::parse(text);
    free(text);
    if (!kid.empty()) out["kid"] = kid;
    out["use"] = "sig";
    out["alg"] = alg;
    return out;
  }
};

SigningKey NewKey(const std::string& alg, const std::string& kid) {
  cjose_err err{};
  static const uint8_t kE[] = {1, 0, 1};
  cjose_jwk_t* jwk = alg == "RS256" ? cjose_jwk_create_RSA_random(2048, kE, sizeof kE, &err)
                                    : cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
  EXPECT_NE(jwk, nullptr);
  return {alg, kid,
          std::shared_ptr<cjose_jwk_t>(jwk, [](cjose_jwk_t* k) { cjose_jwk_release(k); })};
}

// One RSA key for the whole binary: generating 2048-bit keys is slow.
const SigningKey& RsaKey(const std::string& kid) {
  static std::map<std::string, SigningKey>* keys = new std::map<std::string, SigningKey>();
  auto it = keys->find(kid);
  if (it == keys->end()) it = keys->emplace(kid, NewKey("RS256", kid)).first;
  return it->second;
}

json Claims() {
  return {{"sub", "alice"},        {"tenant_id", "t1"}, {"app_code", "PLATFORM"},
          {"perms", {"a:b"}},      {"exp", kNow + 600}, {"iss", "https://sso.example.com"},
          {"aud", "export-center"}};
}

std::string Sign(const SigningKey& key, const json& claims = Claims(),
                 std::string header_alg = "") {
  cjose_err err{};
  cjose_header_t* header = cjose_header_new(&err);
  cjose_header_set(header, CJOSE_HDR_ALG, header_alg.empty() ? key.alg.c_str() : header_alg.c_str(),
                   &err);
  if (!key.kid.empty()) cjose_header_set(header, CJOSE_HDR_KID, key.kid.c_str(), &err);
  const std::string payload = claims.dump();
  cjose_jws_t* jws =
      cjose_jws_sign(key.jwk.get(), header, reinterpret_cast<const uint8_t*>(payload.data()),
                     payload.size(), &err);
  EXPECT_NE(jws, nullptr) << (err.message ? err.message : "");
  const char* compact = nullptr;
  cjose_jws_export(jws, &compact, &err);
  std::string out = compact;
  cjose_jws_release(jws);
  cjose_header_release(header);
  return out;
}

std::string Jwks(const std::vector<const SigningKey*>& keys) {
  json doc = {{"keys", json::array()}};
  for (const SigningKey* key : keys) doc["keys"].push_back(key->PublicJwk());
  return doc.dump();
}

IdentityOptions Checked() {
  IdentityOptions auth;
  auth.jwt_issuer = "https://sso.example.com";
  auth.jwt_audience = "export-center";
  return auth;
}

TEST(Jwks, KeepsSigningKeysItCanUseAndSkipsTheRest) {
  const SigningKey& rsa = RsaKey("r1");
  SigningKey ec = NewKey("ES256", "e1");
  json doc = json::parse(Jwks({&rsa, &ec}));
  doc["keys"].push_back({{"kty", "oct"}, {"k", "c2VjcmV0"}, {"kid", "o1"}});  // symmetric
  json enc = rsa.PublicJwk();
  enc["use"] = "enc";
  enc["kid"] = "enc1";
  doc["keys"].push_back(enc);
  json ps = rsa.PublicJwk();
  ps["alg"] = "PS256";
  ps["kid"] = "ps1";
  doc["keys"].push_back(ps);
  doc["keys"].push_back({{"kty", "OKP"}, {"crv", "Ed25519"}, {"x", "AAAA"}, {"kid", "ed"}});
  auto keys = ParseJwks(doc.dump());
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  ASSERT_EQ(keys->keys().size(), 2u);
  EXPECT_EQ(keys->keys()[0].alg, "RS256");
  EXPECT_EQ(keys->keys()[1].alg, "ES256");
  EXPECT_TRUE(keys->HasKid("e1"));
  EXPECT_FALSE(keys->HasKid("o1"));
}

TEST(Jwks, RefusesWhatItCannotReadSafely) {
  const SigningKey& rsa = RsaKey("r1");
  EXPECT_FALSE(ParseJwks("").ok());
  EXPECT_FALSE(ParseJwks("[]").ok());
  EXPECT_FALSE(ParseJwks(R"({"keys":{}})").ok());
  EXPECT_FALSE(ParseJwks(R"({"keys":[1]})").ok());
  EXPECT_FALSE(ParseJwks(R"({"keys":[],"keys":[]})").ok());  // strict JSON
  json twice = json::parse(Jwks({&rsa, &rsa}));
  EXPECT_FALSE(ParseJwks(twice.dump()).ok());  // two keys of one kid
  json small = rsa.PublicJwk();
  small["n"] = "AQAB";  // a 24-bit modulus
  EXPECT_FALSE(ParseJwks(json{{"keys", {small}}}.dump()).ok());
  json no_e = rsa.PublicJwk();
  no_e.erase("e");
  EXPECT_FALSE(ParseJwks(json{{"keys", {no_e}}}.dump()).ok());
  json bad_point = NewKey("ES256", "e").PublicJwk();
  bad_point["x"] = "AAAA";
  EXPECT_FALSE(ParseJwks(json{{"keys", {bad_point}}}.dump()).ok());
  // Values cjose would abort the process on (found by jwks_fuzzer): a '='
  // inside, a length of 4k+1. Refused by name before cjose sees them.
  for (const char* member : {"x", "y"}) {
    for (const char* value : {"MKBCTNIcKUSDi=11ySs3526iDZ8AiTo7Tu6KPAqv7D4", "AAAAA"}) {
      json bad = NewKey("ES256", "e").PublicJwk();
      bad[member] = value;
      auto refused = ParseJwks(json{{"keys", {bad}}}.dump());
      ASSERT_FALSE(refused.ok()) << member << "=" << value;
      EXPECT_EQ(refused.status().message(),
                std::string("JWKS key 0: a ES256 key whose \"") + member + "\" is not base64url");
    }
  }
  json bad_e = rsa.PublicJwk();
  bad_e["e"] = "AQA=B";
  EXPECT_FALSE(ParseJwks(json{{"keys", {bad_e}}}.dump()).ok());
  json many = {{"keys", json::array()}};
  for (size_t i = 0; i <= kMaxJwksKeys; ++i) many["keys"].push_back({{"kty", "oct"}});
  EXPECT_FALSE(ParseJwks(many.dump()).ok());
}

// docs/fuzzing.md#nesting: a JWKS URL's answer (or file) nested a million deep is refused by
// the strict parse's nesting check (common/nesting.h) before a tree exists,
// with words that say so.
TEST(Jwks, AnAnswerNestedAMillionDeepIsRefusedClearly) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  auto keys = ParseJwks(R"({"keys":[{"kty":"RSA","x5c":)" + deep + "}]}");
  ASSERT_FALSE(keys.ok());
  EXPECT_EQ(keys.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(keys.status().message(), "JWKS: JSON nested deeper than 32 levels");
}

TEST(KeySetFind, SelectsByAlgorithmAndKid) {
  auto set = ParseJwks(Jwks({&RsaKey("r1"), &RsaKey("r2")}));
  ASSERT_TRUE(set.ok());
  auto hs = Hs256Key("0123456789abcdef0123456789abcdef");
  ASSERT_TRUE(hs.ok());
  std::vector<VerificationKey> keys = set->keys();
  keys.push_back(*hs);
  KeySet all(keys);
  ASSERT_EQ(all.Find("RS256", "r2").size(), 1u);
  EXPECT_EQ(all.Find("RS256", "r2")[0]->kid, "r2");
  EXPECT_EQ(all.Find("RS256", "").size(), 2u);  // no kid: every key of the algorithm
  EXPECT_TRUE(all.Find("RS256", "r9").empty());
  EXPECT_TRUE(all.Find("ES256", "r1").empty());    // a key serves its algorithm only
  EXPECT_EQ(all.Find("HS256", "any").size(), 1u);  // a configured key has no kid
}

TEST(JwksFile, Rs256AndEs256TokensVerifyWithTheirKeysOnly) {
  const SigningKey& rsa = RsaKey("r1");
  SigningKey ec = NewKey("ES256", "e1");
  char path[] = "/tmp/ec-jwks-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << Jwks({&rsa, &ec});
  IdentityOptions auth = Checked();
  auth.jwks_file = path;
  auto verifier = TokenVerifier::Create(auth);
  unlink(path);
  ASSERT_TRUE(verifier.ok()) << verifier.status().message();
  EXPECT_TRUE((*verifier)->Verify(Sign(rsa), kNow).ok());
  auto p = (*verifier)->Verify(Sign(ec), kNow);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->user, "alice");
  // ES256 signature under the RSA key's kid, an unknown kid, HS256 (not configured).
  SigningKey ec_as_r1 = ec;
  ec_as_r1.kid = "r1";
  EXPECT_FALSE((*verifier)->Verify(Sign(ec_as_r1), kNow).ok());
  SigningKey other = NewKey("ES256", "e9");
  auto unknown = (*verifier)->Verify(Sign(other), kNow);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown key"), std::string::npos);
  SigningKey hs{"HS256", "", Hs256Key("0123456789abcdef0123456789abcdef")->jwk};
  EXPECT_EQ((*verifier)->Verify(Sign(hs), kNow).status().message(), "token algorithm not accepted");
  // A token from another issuer, signed by the right key, is still refused.
  json foreign = Claims();
  foreign["iss"] = "https://other.example.com";
  EXPECT_FALSE((*verifier)->Verify(Sign(rsa, foreign), kNow).ok());
}

// A JWKS URL answered by a script; the clock is the test's.
struct UrlFixture {
  std::vector<ScriptedAnswer> answers;
  std::chrono::steady_clock::time_point now{};
  std::unique_ptr<ScriptedHttpClientFactory> factory;
  std::unique_ptr<JwksUrlKeySource> source;

  explicit UrlFixture(std::function<ScriptedAnswer(const fakes::RecordedCall&)> script,
                      int64_t max_bytes = 256 * 1024) {
    factory = std::make_unique<ScriptedHttpClientFactory>(std::move(script));
    JwksUrlOptions options;
    options.url = "https://sso.example.com/realms/main/certs";
    options.refresh_min_interval = std::chrono::seconds(30);
    options.max_age = std::chrono::seconds(3600);
    options.max_bytes = max_bytes;
    auto created = JwksUrlKeySource::Create(options, factory.get(), [this] { return now; });
    EXPECT_TRUE(created.ok());
    source = std::move(created).value();
  }
};

TEST(JwksUrl, FetchesOnFirstUseAndRefetchesAnUnknownKidAtMostOncePerInterval) {
  std::string served = Jwks({&RsaKey("r1")});
  UrlFixture f([&](const fakes::RecordedCall& call) {
    EXPECT_EQ(call.request.path, "/realms/main/certs");
    EXPECT_EQ(call.client.base_url, "https://sso.example.com");
    EXPECT_TRUE(call.request.deadline.has_value());
    return ScriptedAnswer(200, served);
  });
  EXPECT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  EXPECT_EQ(f.source->fetch_count(), 1);
  EXPECT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);  // cached
  EXPECT_EQ(f.source->fetch_count(), 1);

  // The provider rotates r2 in: the first token naming it, past the interval, refetches.
  served = Jwks({&RsaKey("r1"), &RsaKey("r2")});
  f.now += std::chrono::seconds(31);
  EXPECT_EQ(f.source->KeysFor("RS256", "r2").size(), 1u);
  EXPECT_EQ(f.source->fetch_count(), 2);

  // Made-up kids: one fetch per interval, however many tokens.
  f.now += std::chrono::seconds(31);
  for (int i = 0; i < 20; ++i)
    EXPECT_TRUE(f.source->KeysFor("RS256", "x" + std::to_string(i)).empty());
  EXPECT_EQ(f.source->fetch_count(), 3);
  f.now += std::chrono::seconds(31);
  EXPECT_TRUE(f.source->KeysFor("RS256", "y").empty());
  EXPECT_EQ(f.source->fetch_count(), 4);
}

TEST(JwksUrl, KeepsItsKeysWhenTheEndpointFailsOrLies) {
  ScriptedAnswer next(200, Jwks({&RsaKey("r1")}));
  UrlFixture f([&](const fakes::RecordedCall&) { return next; }, /*max_bytes=*/16 * 1024);
  ASSERT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  std::vector<ScriptedAnswer> failures;
  failures.emplace_back(500, "oops");
  failures.emplace_back(200, "{not json");
  failures.emplace_back(200, R"({"keys":[]})" + std::string(20000, ' '));  // over the cap
  ScriptedAnswer down;
  down.error = http::ClientError::kConnection;
  failures.push_back(down);
  ScriptedAnswer slow(200, Jwks({}));
  slow.too_slow = true;
  failures.push_back(slow);
  for (const ScriptedAnswer& failure : failures) {
    next = failure;
    f.now += std::chrono::seconds(31);
    EXPECT_FALSE(f.source->Refresh().ok());
    EXPECT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u) << failure.status << failure.body;
  }
  // A well-read set replaces the keys, also by removing one (revocation).
  next = ScriptedAnswer(200, Jwks({&RsaKey("r2")}));
  f.now += std::chrono::seconds(31);
  EXPECT_TRUE(f.source->Refresh().ok());
  EXPECT_TRUE(f.source->KeysFor("RS256", "r1").empty());
}

// Refetched on use past half the max age, so a healthy provider's set never
// reaches its max age while tokens arrive.
TEST(JwksUrl, AnAgingSetIsRefetchedOnUse) {
  std::string served = Jwks({&RsaKey("r1")});
  UrlFixture f([&](const fakes::RecordedCall&) { return ScriptedAnswer(200, served); });
  ASSERT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  served = Jwks({&RsaKey("r2")});  // r1 withdrawn
  f.now += std::chrono::seconds(1799);
  EXPECT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  EXPECT_EQ(f.source->fetch_count(), 1);
  f.now += std::chrono::seconds(2);
  EXPECT_TRUE(f.source->KeysFor("RS256", "r1").empty());
  EXPECT_EQ(f.source->fetch_count(), 2);
}

// docs/http-api.md#authentication: a key older than auth.jwks-max-age-seconds
// stops verifying while the fetches fail — revocation wins over availability —
// and verifies again once a fetch succeeds.
TEST(JwksUrl, KeysOlderThanTheirMaxAgeStopVerifyingWhileFetchesFail) {
  bool down = false;
  UrlFixture f([&](const fakes::RecordedCall&) {
    if (!down) return ScriptedAnswer(200, Jwks({&RsaKey("r1")}));
    ScriptedAnswer refused;
    refused.error = http::ClientError::kConnection;
    return refused;
  });
  ASSERT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  down = true;
  f.now += std::chrono::seconds(1801);  // due for a refetch, which fails: the held keys answer
  EXPECT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  EXPECT_EQ(f.source->fetch_count(), 2);
  f.now += std::chrono::seconds(1800);  // 3601 s old: past max age
  EXPECT_TRUE(f.source->KeysFor("RS256", "r1").empty());
  EXPECT_EQ(f.source->fetch_count(), 3);
  f.now += std::chrono::seconds(10);  // within the refresh interval: no fetch, still nothing
  EXPECT_TRUE(f.source->KeysFor("RS256", "r1").empty());
  EXPECT_TRUE(f.source->KeysFor("RS256", "").empty());
  EXPECT_EQ(f.source->fetch_count(), 3);
  down = false;
  f.now += std::chrono::seconds(21);
  EXPECT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  EXPECT_EQ(f.source->fetch_count(), 4);
}

TEST(JwksUrl, AKnownKidNeverWaitsForAnotherTokensFetch) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> sent{0};
  UrlFixture f([&](const fakes::RecordedCall&) {
    // The second fetch (past half the max age) hangs until the test lets it answer.
    if (++sent == 2) released.wait();
    return ScriptedAnswer(200, Jwks({&RsaKey("r1")}));
  });
  ASSERT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  f.now += std::chrono::seconds(1801);
  std::thread revalidating([&] { EXPECT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u); });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (sent < 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(sent, 2) << "the revalidating fetch never started";
  // The fetch is in flight: a token naming a held kid is answered by the held set now.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(f.source->KeysFor("RS256", "r1").size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  release.set_value();
  revalidating.join();
  EXPECT_EQ(f.source->fetch_count(), 2);
}

TEST(JwksUrl, VerifierNeedsAFetcherAndFetchesNothingForAlgorithmsItRefuses) {
  IdentityOptions auth = Checked();
  auth.jwks_url = "https://sso.example.com/certs";
  EXPECT_FALSE(TokenVerifier::Create(auth).ok());
  ScriptedHttpClientFactory factory({ScriptedAnswer(200, Jwks({&RsaKey("r1")}))});
  auto verifier = TokenVerifier::Create(auth, &factory);
  ASSERT_TRUE(verifier.ok());
  EXPECT_TRUE((*verifier)->jwks_enabled());
  SigningKey hs{"HS256", "k", Hs256Key("0123456789abcdef0123456789abcdef")->jwk};
  EXPECT_FALSE((*verifier)->Verify(Sign(hs), kNow).ok());
  EXPECT_TRUE(factory.calls().empty());
  EXPECT_TRUE((*verifier)->Verify(Sign(RsaKey("r1")), kNow).ok());
  EXPECT_EQ(factory.calls().size(), 1u);
}

}  // namespace
}  // namespace export_center::identity
