#include "identity/token_verifier.h"

#include <cjose/jws.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/ascii.h"
#include "common/digest.h"
#include "common/encoding.h"
#include "common/json_dump.h"
#include "common/strict_json.h"

namespace export_center::identity {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxTokenBytes = 8192;

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("cannot read key file " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

PkeyPtr ReadPem(const std::string& pem, bool private_key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  EVP_PKEY* key = nullptr;
  if (bio) {
    key = private_key ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                      : PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  }
  return PkeyPtr(key, &EVP_PKEY_free);
}

Status CheckRsaKey(EVP_PKEY* key, const std::string& path) {
  if (key == nullptr) return InvalidArgument("no PEM key in " + path);
  if (EVP_PKEY_base_id(key) != EVP_PKEY_RSA) return InvalidArgument(path + " is not an RSA key");
  if (EVP_PKEY_bits(key) < 2048) return InvalidArgument(path + ": RSA key under 2048 bits");
  return Status::Ok();
}

StatusOr<std::string> RsaSign(EVP_PKEY* key, std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()),
                     data.size()) != 1) {
    return Internal("RS256 signing failed");
  }
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1) {
    return Internal("RS256 signing failed");
  }
  sig.resize(len);
  return sig;
}

// Decodes one base64url segment holding a JSON object.
StatusOr<json> DecodeJsonSegment(std::string_view segment, const char* what) {
  auto bytes = Base64UrlDecode(segment);
  if (!bytes) return Unauthenticated(std::string("malformed token ") + what);
  auto parsed = ParseStrictJson(*bytes);
  if (!parsed.ok() || !parsed->is_object()) {
    return Unauthenticated(std::string("malformed token ") + what);
  }
  return std::move(parsed).value();
}

const std::string* StringClaim(const json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

// A NumericDate claim (RFC 7519 §2): a JSON number of seconds.
bool NumericClaim(const json& claims, const char* name, double* out) {
  auto it = claims.find(name);
  if (it == claims.end()) return false;
  *out = it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
  return true;
}

// RFC 7519 §4.1.3: aud is one string or an array of strings; ours must be in it.
bool AudienceHolds(const json& aud, const std::string& audience) {
  if (aud.is_string()) return aud.get_ref<const std::string&>() == audience;
  if (!aud.is_array()) return false;
  return std::any_of(aud.begin(), aud.end(), [&](const json& a) {
    return a.is_string() && a.get_ref<const std::string&>() == audience;
  });
}

struct ClaimRules {
  const std::string& issuer;
  const std::string& audience;
  int64_t leeway;
};

// The time and audience claims, each allowed `leeway` seconds of clock skew.
// A malformed optional claim (a string nbf, say) is refused like a failed one.
Status CheckRegisteredClaims(const json& claims, int64_t now, const ClaimRules& rules) {
  double exp = 0;
  if (!NumericClaim(claims, "exp", &exp) || std::isnan(exp)) {
    return Unauthenticated("token has no exp claim");
  }
  if (static_cast<double>(now - rules.leeway) >= exp) {
    return Unauthenticated("token expired; please sign in again");
  }
  double nbf = 0;
  if (NumericClaim(claims, "nbf", &nbf) &&
      (std::isnan(nbf) || static_cast<double>(now + rules.leeway) < nbf)) {
    return Unauthenticated("token not yet valid");
  }
  double iat = 0;
  if (NumericClaim(claims, "iat", &iat) &&
      (std::isnan(iat) || iat > static_cast<double>(now + rules.leeway))) {
    return Unauthenticated("token issued in the future; check the issuer's clock");
  }
  if (!rules.issuer.empty()) {
    const std::string* iss = StringClaim(claims, "iss");
    if (!iss || *iss != rules.issuer) return Unauthenticated("token issuer not accepted");
  }
  if (!rules.audience.empty()) {
    auto aud = claims.find("aud");
    if (aud == claims.end() || !AudienceHolds(*aud, rules.audience)) {
      return Unauthenticated("token audience not accepted");
    }
  }
  return Status::Ok();
}

StatusOr<Principal> PrincipalFromClaims(const json& claims, int64_t now, const ClaimRules& rules,
                                        const ClaimMapping& mapping) {
  EC_RETURN_IF_ERROR(CheckRegisteredClaims(claims, now, rules));
  EC_ASSIGN_OR_RETURN(MappedClaims mapped, MapClaims(claims, mapping));
  auto app_code = task::ParseAppCode(mapped.app);
  if (!app_code) return Unauthenticated("token " + mapping.app + " must be PLATFORM or MERCHANT");
  Principal p{std::move(mapped.user), std::move(mapped.tenant), *app_code,
              std::move(mapped.permissions)};
  // A number (checked above); a far-future exp saturates instead of overflowing.
  const double until_ms =
      (claims.at("exp").get<double>() + static_cast<double>(rules.leeway)) * 1000;
  p.valid_until_ms = until_ms >= 9.0e18 ? std::numeric_limits<int64_t>::max()
                                        : static_cast<int64_t>(std::floor(until_ms));
  return p;
}

// libcjose checks the signature of the compact JWS with the chosen key; the
// header's alg has been checked against ours and the key's before.
bool SignatureVerifies(std::string_view jwt, const VerificationKey& key) {
  cjose_err err{};
  std::unique_ptr<cjose_jws_t, decltype(&cjose_jws_release)> jws(
      cjose_jws_import(jwt.data(), jwt.size(), &err), &cjose_jws_release);
  return jws && cjose_jws_verify(jws.get(), key.jwk.get(), &err);
}

StatusOr<KeySet> ReadJwksFile(const std::string& path) {
  EC_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto keys = ParseJwks(text);
  if (!keys.ok()) return InvalidArgument(path + ": " + keys.status().message());
  if (keys->keys().empty()) return InvalidArgument(path + ": no RS256 or ES256 signing key");
  return keys;
}

JwksUrlOptions UrlOptionsOf(const IdentityOptions& auth) {
  JwksUrlOptions options;
  options.url = auth.jwks_url;
  options.refresh_min_interval = std::chrono::seconds(auth.jwks_refresh_min_interval_seconds);
  options.max_age = std::chrono::seconds(auth.jwks_max_age_seconds);
  options.fetch_timeout = std::chrono::milliseconds(auth.jwks_fetch_timeout_ms);
  options.max_bytes = auth.jwks_max_bytes;
  options.tls.ca_cert_file = auth.jwks_ca_cert_file;
  return options;
}

}  // namespace

TokenVerifier::~TokenVerifier() = default;

StatusOr<std::unique_ptr<TokenVerifier>> TokenVerifier::Create(
    const IdentityOptions& auth, http::HttpClientFactory* jwks_fetcher) {
  std::unique_ptr<TokenVerifier> v(new TokenVerifier());
  v->issuer_ = auth.jwt_issuer;
  v->audience_ = auth.jwt_audience;
  v->leeway_seconds_ = std::max(0, auth.jwt_leeway_seconds);
  v->mapping_ = ClaimMapping::FromOptions(auth);
  std::vector<VerificationKey> configured;
  if (!auth.jwt_hs256_secret.empty()) {
    EC_ASSIGN_OR_RETURN(configured.emplace_back(), Hs256Key(auth.jwt_hs256_secret));
    v->accepts_.hs256 = true;
  }
  if (!auth.jwt_rs256_public_key_file.empty()) {
    EC_ASSIGN_OR_RETURN(std::string pem, ReadFile(auth.jwt_rs256_public_key_file));
    EC_ASSIGN_OR_RETURN(configured.emplace_back(),
                        Rs256KeyFromPem(pem, auth.jwt_rs256_public_key_file));
    v->accepts_.rs256_pem = true;
  }
  if (!auth.jwks_file.empty()) {
    EC_ASSIGN_OR_RETURN(KeySet file_keys, ReadJwksFile(auth.jwks_file));
    configured.insert(configured.end(), file_keys.keys().begin(), file_keys.keys().end());
    v->accepts_.jwks = true;
  }
  v->key_sources_.push_back(std::make_unique<StaticKeySource>(KeySet(std::move(configured))));
  if (!auth.jwks_url.empty()) {
    EC_ASSIGN_OR_RETURN(auto url_source,
                        JwksUrlKeySource::Create(UrlOptionsOf(auth), jwks_fetcher));
    v->key_sources_.push_back(std::move(url_source));
    v->accepts_.jwks = true;
  }
  if (!v->hs256_enabled() && !v->rs256_enabled() && !v->jwks_enabled()) {
    return InvalidArgument(
        "auth: configure jwt_hs256_secret, jwt_rs256_public_key_file, jwks_file or jwks_url");
  }
  return v;
}

StatusOr<Principal> TokenVerifier::Authenticate(std::string_view header) const {
  constexpr std::string_view kScheme = "Bearer ";
  if (header.empty()) return Unauthenticated("missing Authorization: Bearer token");
  if (header.size() <= kScheme.size() ||
      !EqualsIgnoreCaseAscii(header.substr(0, kScheme.size()), kScheme)) {
    return Unauthenticated("Authorization must be \"Bearer <token>\"");
  }
  return Verify(header.substr(kScheme.size()), NowSeconds());
}

bool TokenVerifier::AlgorithmAccepted(const std::string& alg) const {
  if (alg == "HS256") return accepts_.hs256;
  if (alg == "RS256") return accepts_.rs256_pem || accepts_.jwks;
  if (alg == "ES256") return accepts_.jwks;
  return false;
}

Status TokenVerifier::CheckSignature(std::string_view jwt, const std::string& alg,
                                     const std::string& kid) const {
  // The algorithm list is ours, not the token's: "none" and HS256 signed
  // with the RSA public key fail here unless explicitly configured; and
  // every key serves one algorithm only. No key source is asked (no JWKS
  // fetch happens) for an algorithm we do not accept.
  if (!AlgorithmAccepted(alg)) return Unauthenticated("token algorithm not accepted");
  bool any_key = false;
  for (const auto& source : key_sources_) {
    for (const VerificationKey& key : source->KeysFor(alg, kid)) {
      any_key = true;
      if (SignatureVerifies(jwt, key)) return Status::Ok();
    }
  }
  if (!any_key) return Unauthenticated("token signed with an unknown key (kid \"" + kid + "\")");
  return Unauthenticated("invalid token signature");
}

StatusOr<Principal> TokenVerifier::Verify(std::string_view jwt, int64_t now_seconds) const {
  if (jwt.size() > kMaxTokenBytes) return Unauthenticated("token too long");
  size_t dot1 = jwt.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : jwt.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || jwt.find('.', dot2 + 1) != std::string_view::npos) {
    return Unauthenticated("malformed token");
  }
  EC_ASSIGN_OR_RETURN(json header, DecodeJsonSegment(jwt.substr(0, dot1), "header"));
  if (!Base64UrlDecode(jwt.substr(dot2 + 1))) return Unauthenticated("malformed token signature");
  const std::string* alg = StringClaim(header, "alg");
  if (!alg) return Unauthenticated("token has no alg");
  // We implement no JWS extensions, so any critical one must be refused.
  if (header.contains("crit")) return Unauthenticated("token uses unsupported extensions");
  std::string kid;
  if (auto it = header.find("kid"); it != header.end()) {
    if (!it->is_string()) return Unauthenticated("token kid must be a string");
    kid = it->get<std::string>();
  }
  // The claims must be strict JSON before any key is looked up.
  EC_ASSIGN_OR_RETURN(json claims,
                      DecodeJsonSegment(jwt.substr(dot1 + 1, dot2 - dot1 - 1), "claims"));
  EC_RETURN_IF_ERROR(CheckSignature(jwt, *alg, kid));
  return PrincipalFromClaims(claims, now_seconds, {issuer_, audience_, leeway_seconds_}, mapping_);
}

StatusOr<std::string> MintToken(const IdentityOptions& auth, const Principal& principal,
                                std::chrono::seconds ttl) {
  const bool rs256 = !auth.jwt_rs256_private_key_file.empty();
  if (!rs256 && auth.jwt_hs256_secret.empty()) {
    return InvalidArgument("auth: configure jwt_hs256_secret or jwt_rs256_private_key_file");
  }
  int64_t now = NowSeconds();
  json header = {{"alg", rs256 ? "RS256" : "HS256"}, {"typ", "JWT"}};
  json claims = {{"sub", principal.user},
                 {"tenant_id", principal.tenant},
                 {"app_code", std::string(task::ToString(principal.app))},
                 {"perms", principal.perms},
                 {"iat", now},
                 {"exp", now + ttl.count()}};
  if (!auth.jwt_issuer.empty()) claims["iss"] = auth.jwt_issuer;
  if (!auth.jwt_audience.empty()) claims["aud"] = auth.jwt_audience;
  std::string signed_part =
      Base64UrlEncode(DumpTolerant(header)) + "." + Base64UrlEncode(DumpTolerant(claims));
  std::string signature;
  if (rs256) {
    EC_ASSIGN_OR_RETURN(std::string pem, ReadFile(auth.jwt_rs256_private_key_file));
    PkeyPtr key = ReadPem(pem, /*private_key=*/true);
    EC_RETURN_IF_ERROR(CheckRsaKey(key.get(), auth.jwt_rs256_private_key_file));
    EC_ASSIGN_OR_RETURN(signature, RsaSign(key.get(), signed_part));
  } else {
    signature = HmacSha256(auth.jwt_hs256_secret, signed_part);
  }
  return signed_part + "." + Base64UrlEncode(signature);
}

}  // namespace export_center::identity
