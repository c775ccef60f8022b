#include "identity/jwt_keys.h"

#include <cjose/jwk.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "common/encoding.h"
#include "common/json_dump.h"
#include "common/strict_json.h"
#include "common/utf8.h"

namespace export_center::identity {
namespace {

using json = nlohmann::json;
using Steady = std::chrono::steady_clock;

constexpr size_t kMinRsaModulusBytes = 256;  // 2048 bits

std::shared_ptr<cjose_jwk_t> Share(cjose_jwk_t* jwk) {
  return std::shared_ptr<cjose_jwk_t>(jwk, [](cjose_jwk_t* k) { cjose_jwk_release(k); });
}

// cjose gets only the public members we name, never a private part a
// misconfigured endpoint might publish beside them.
StatusOr<std::shared_ptr<cjose_jwk_t>> ImportPublicJwk(const json& public_members) {
  const std::string text = DumpTolerant(public_members);
  cjose_err err{};
  cjose_jwk_t* jwk = cjose_jwk_import(text.data(), text.size(), &err);
  if (jwk == nullptr) {
    return InvalidArgument(std::string("unusable key: ") + (err.message ? err.message : "?"));
  }
  return Share(jwk);
}

const std::string* StringMember(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

// The modulus's size without leading zero bytes; 0 when `n` is not strict base64url.
size_t ModulusBytes(const std::string& n) {
  auto bytes = Base64UrlDecode(n);
  if (!bytes) return 0;
  const size_t first = bytes->find_first_not_of('\0');
  return first == std::string::npos ? 0 : bytes->size() - first;
}

// The algorithm a JWK verifies, or empty when we do not use it (another key
// type, curve or algorithm, an encryption key).
std::string UsableAlg(const json& jwk) {
  const std::string* kty = StringMember(jwk, "kty");
  const std::string* use = StringMember(jwk, "use");
  const std::string* alg = StringMember(jwk, "alg");
  if (kty == nullptr || (use != nullptr && *use != "sig")) return "";
  std::string fits;
  if (*kty == "RSA") fits = "RS256";
  const std::string* crv = StringMember(jwk, "crv");
  if (*kty == "EC" && crv != nullptr && *crv == "P-256") fits = "ES256";
  if (fits.empty() || (alg != nullptr && *alg != fits)) return "";
  return fits;
}

json PublicMembers(const json& jwk, const std::string& alg) {
  if (alg == "RS256") return {{"kty", "RSA"}, {"n", jwk.at("n")}, {"e", jwk.at("e")}};
  return {{"kty", "EC"}, {"crv", "P-256"}, {"x", jwk.at("x")}, {"y", jwk.at("y")}};
}

Status CheckPublicMembers(const json& jwk, const std::string& alg) {
  const char* const rsa[] = {"n", "e"};
  const char* const ec[] = {"x", "y"};
  for (const char* name : alg == "RS256" ? rsa : ec) {
    const std::string* member = StringMember(jwk, name);
    if (member == nullptr) {
      return InvalidArgument(std::string("a ") + alg + " key without string \"" + name + "\"");
    }
    // Strict base64url before cjose sees it: Debian's cjose asserts (aborts
    // the process) on some malformed values, e.g. a length of 4k+1.
    if (!Base64UrlDecode(*member)) {
      return InvalidArgument(std::string("a ") + alg + " key whose \"" + name +
                             "\" is not base64url");
    }
  }
  if (alg == "RS256" && ModulusBytes(*StringMember(jwk, "n")) < kMinRsaModulusBytes) {
    return InvalidArgument("an RSA key under 2048 bits (or its n not base64url)");
  }
  return Status::Ok();
}

StatusOr<VerificationKey> ReadJwk(const json& jwk) {
  if (!jwk.is_object()) return InvalidArgument("a key that is not a JSON object");
  VerificationKey key;
  key.alg = UsableAlg(jwk);
  if (key.alg.empty()) return key;  // skipped, not refused
  auto kid = jwk.find("kid");
  if (kid != jwk.end() && !kid->is_string()) return InvalidArgument("a kid that is not a string");
  if (kid != jwk.end()) key.kid = kid->get<std::string>();
  EC_RETURN_IF_ERROR(CheckPublicMembers(jwk, key.alg));
  EC_ASSIGN_OR_RETURN(key.jwk, ImportPublicJwk(PublicMembers(jwk, key.alg)));
  return key;
}

std::vector<VerificationKey> Copies(const std::vector<const VerificationKey*>& found) {
  std::vector<VerificationKey> out;
  out.reserve(found.size());
  for (const VerificationKey* key : found) out.push_back(*key);
  return out;
}

}  // namespace

std::vector<const VerificationKey*> KeySet::Find(std::string_view alg, std::string_view kid) const {
  std::vector<const VerificationKey*> out;
  for (const VerificationKey& key : keys_) {
    if (key.alg != alg) continue;
    if (kid.empty() || key.kid.empty() || key.kid == kid) out.push_back(&key);
  }
  // A kid that names a key wins over the keys without one.
  if (!kid.empty() && HasKid(kid)) {
    std::erase_if(out, [&](const VerificationKey* key) { return key->kid != kid; });
  }
  return out;
}

bool KeySet::HasKid(std::string_view kid) const {
  return std::any_of(keys_.begin(), keys_.end(),
                     [&](const VerificationKey& key) { return key.kid == kid; });
}

StatusOr<KeySet> ParseJwks(std::string_view document) {
  auto parsed = ParseStrictJson(document);
  if (!parsed.ok())
    return InvalidArgument("JWKS: " + utf8::Excerpt(parsed.status().message(), 200));
  if (!parsed->is_object()) return InvalidArgument("JWKS: not a JSON object");
  auto keys = parsed->find("keys");
  if (keys == parsed->end() || !keys->is_array()) {
    return InvalidArgument("JWKS: no \"keys\" array");
  }
  if (keys->size() > kMaxJwksKeys) {
    return InvalidArgument("JWKS: more than " + std::to_string(kMaxJwksKeys) + " keys");
  }
  std::vector<VerificationKey> out;
  std::set<std::string> kids;
  for (size_t i = 0; i < keys->size(); ++i) {
    auto key = ReadJwk((*keys)[i]);
    if (!key.ok()) {
      return InvalidArgument("JWKS key " + std::to_string(i) + ": " + key.status().message());
    }
    if (key->alg.empty()) continue;
    if (!key->kid.empty() && !kids.insert(key->kid).second) {
      return InvalidArgument("JWKS: two keys with kid \"" + key->kid + "\"");
    }
    out.push_back(std::move(key).value());
  }
  return KeySet(std::move(out));
}

StatusOr<VerificationKey> Hs256Key(std::string_view secret) {
  cjose_err err{};
  cjose_jwk_t* jwk = cjose_jwk_create_oct_spec(reinterpret_cast<const uint8_t*>(secret.data()),
                                               secret.size(), &err);
  if (jwk == nullptr) return InvalidArgument("auth: unusable HS256 secret");
  return VerificationKey{"HS256", "", Share(jwk)};
}

StatusOr<VerificationKey> Rs256KeyFromPem(std::string_view pem, const std::string& what) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr, &EVP_PKEY_free);
  if (!key) return InvalidArgument("no PEM key in " + what);
  if (EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA)
    return InvalidArgument(what + " is not an RSA key");
  if (EVP_PKEY_bits(key.get()) < 2048) return InvalidArgument(what + ": RSA key under 2048 bits");
  // The same import path as a JWKS key: the PEM key's n and e as a JWK.
  BIGNUM* n = nullptr;
  BIGNUM* e = nullptr;
  EVP_PKEY_get_bn_param(key.get(), OSSL_PKEY_PARAM_RSA_N, &n);
  EVP_PKEY_get_bn_param(key.get(), OSSL_PKEY_PARAM_RSA_E, &e);
  auto bytes = [](const BIGNUM* bn) {
    std::string out(static_cast<size_t>(BN_num_bytes(bn)), '\0');
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
    return Base64UrlEncode(out);
  };
  StatusOr<std::shared_ptr<cjose_jwk_t>> jwk = InvalidArgument(what + ": RSA key without n, e");
  if (n != nullptr && e != nullptr) {
    jwk = ImportPublicJwk({{"kty", "RSA"}, {"n", bytes(n)}, {"e", bytes(e)}});
  }
  BN_free(n);
  BN_free(e);
  if (!jwk.ok()) return jwk.status();
  return VerificationKey{"RS256", "", std::move(jwk).value()};
}

std::vector<VerificationKey> StaticKeySource::KeysFor(std::string_view alg, std::string_view kid) {
  return Copies(keys_.Find(alg, kid));
}

// ---- JwksUrlKeySource ------------------------------------------------------

StatusOr<std::unique_ptr<JwksUrlKeySource>> JwksUrlKeySource::Create(
    const JwksUrlOptions& options, http::HttpClientFactory* factory, Clock clock) {
  if (factory == nullptr) return InvalidArgument("auth.jwks-url: no HTTP client configured");
  const auto [origin, path] = http::SplitUrl(options.url);
  http::HttpClientOptions client_options;
  client_options.base_url = origin;
  const int timeout_ms = static_cast<int>(options.fetch_timeout.count());
  client_options.connect_timeout_ms = timeout_ms;
  client_options.read_timeout_ms = timeout_ms;
  client_options.write_timeout_ms = timeout_ms;
  client_options.tls = options.tls;
  auto client = factory->NewClient(client_options);
  if (!client.ok()) return InvalidArgument("auth.jwks-url: " + client.status().message());
  if (!clock) clock = [] { return Steady::now(); };
  return std::unique_ptr<JwksUrlKeySource>(
      new JwksUrlKeySource(options, std::move(client).value(), std::move(clock)));
}

JwksUrlKeySource::JwksUrlKeySource(JwksUrlOptions options, std::unique_ptr<http::HttpClient> client,
                                   Clock clock)
    : options_(std::move(options)),
      path_(http::SplitUrl(options_.url).second),
      clock_(std::move(clock)),
      client_(std::move(client)),
      keys_(std::make_shared<KeySet>()) {}

std::shared_ptr<const KeySet> JwksUrlKeySource::Current() const {
  MutexLock lock(&mu_);
  return keys_;
}

bool JwksUrlKeySource::Stale() const {
  MutexLock lock(&mu_);
  return !attempted_ || clock_() - fetched_at_ >= options_.max_age / 2;
}

bool JwksUrlKeySource::Expired() const {
  MutexLock lock(&mu_);
  return clock_() - fetched_at_ >= options_.max_age;
}

std::shared_ptr<const KeySet> JwksUrlKeySource::Fresh() const {
  MutexLock lock(&mu_);
  if (clock_() - fetched_at_ >= options_.max_age) return std::make_shared<const KeySet>();
  return keys_;
}

bool JwksUrlKeySource::Fetching() const {
  MutexLock lock(&mu_);
  return fetching_;
}

int JwksUrlKeySource::fetch_count() const {
  MutexLock lock(&mu_);
  return fetch_count_;
}

std::vector<VerificationKey> JwksUrlKeySource::KeysFor(std::string_view alg, std::string_view kid) {
  // An unknown kid may be a key the provider rotated in since our fetch.
  const bool unknown_kid = !kid.empty() && !Current()->HasKid(kid);
  // Past half its max age the set is refetched on use, and until max age the
  // held set answers a known kid while another token's fetch is in flight:
  // waiting would stall every request for the fetch's deadline. Past max age
  // nothing answers but a fetched set (revocation wins over availability,
  // docs/http-api.md#authentication): such a token waits for the fetch in
  // flight or makes one, at most once per refresh interval.
  const bool expired = Expired();
  const bool revalidating = !expired && !unknown_kid && Fetching();
  if (!revalidating && (expired || unknown_kid || Stale())) {
    Status refreshed = Refresh();
    (void)refreshed;  // logged by Refresh; the keys held answer until max age
  }
  return Copies(Fresh()->Find(alg, kid));
}

Status JwksUrlKeySource::Refresh() {
  MutexLock fetch_lock(&fetch_mu_);
  {
    MutexLock lock(&mu_);
    // The rate limit: tokens naming made-up kids cost one fetch per interval.
    if (attempted_ && clock_() - last_attempt_ < options_.refresh_min_interval) {
      return Status::Ok();
    }
    attempted_ = true;
    last_attempt_ = clock_();
    ++fetch_count_;
    fetching_ = true;
  }
  auto fetched = Fetch();
  {
    MutexLock lock(&mu_);
    fetching_ = false;
  }
  if (!fetched.ok()) {
    spdlog::warn("auth: JWKS fetch from {} failed, keeping the {} keys held: {}", options_.url,
                 Current()->keys().size(), fetched.status().message());
    return fetched.status();
  }
  MutexLock lock(&mu_);
  keys_ = std::make_shared<const KeySet>(std::move(fetched).value());
  fetched_at_ = clock_();
  return Status::Ok();
}

StatusOr<KeySet> JwksUrlKeySource::Fetch() {
  http::ClientRequest request;
  request.path = path_;
  request.headers.Add("Accept", "application/json");
  request.deadline = Steady::now() + options_.fetch_timeout;
  request.max_body_bytes = options_.max_bytes;
  http::ClientAnswer answer = client_->Send(request);
  switch (answer.outcome) {
    case http::ClientAnswer::Outcome::kTooLarge:
      return Unavailable("the JWKS is larger than " + std::to_string(options_.max_bytes) +
                         " bytes");
    case http::ClientAnswer::Outcome::kTooSlow:
      return Unavailable("the JWKS did not arrive within the fetch timeout");
    case http::ClientAnswer::Outcome::kNotSent:
      return Unavailable("no answer (" + answer.error_text + ")");
    case http::ClientAnswer::Outcome::kRead:
      break;
  }
  if (answer.status != 200) return Unavailable("HTTP " + std::to_string(answer.status));
  return ParseJwks(answer.body);
}

}  // namespace export_center::identity
