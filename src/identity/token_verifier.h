#pragma once
// Token verification: who a JWT bearer token says is calling
// (docs/http-api.md#authentication). What that caller may then do is a use
// case's rule, not identity's.
//
// Tokens are compact JWS: HS256 with a shared secret, RS256 with an RSA
// public key, RS256 and ES256 with the keys of a JWK Set (file or URL,
// identity/jwt_keys.h), whichever the config enables; libcjose checks the
// signature. The header's `alg` must be one of the enabled ones and the key
// must be of that algorithm, so "none" and the HS256-with-the-public-key
// confusion attack are refused. The user, tenant, app code (PLATFORM|MERCHANT)
// and permissions come from the claims the mapping names (identity/claim_mapping.h;
// by default sub, tenant_id, app_code, perms); exp (required), iss and aud
// (checked when configured: iss equal to auth.jwt-issuer, aud a string equal
// to auth.jwt-audience or an array holding it), nbf and iat (optional). Times
// use the process clock with auth.jwt-leeway-seconds of skew allowed: a token
// is an authentication artefact, not a lease
// (docs/http-api.md#authentication).
//
// Thread-safety: TokenVerifier may be shared: it is immutable after Create
// but for the JWKS URL's key cache, which is thread-safe.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "http/http_client.h"
#include "identity/claim_mapping.h"
#include "identity/identity_options.h"
#include "identity/jwt_keys.h"
#include "identity/principal.h"

namespace export_center::identity {

class TokenVerifier {
 public:
  // The keys as configured: the HS256 secret, the RS256 PEM file, the JWKS
  // file (read now) and the JWKS URL (fetched through `jwks_fetcher` when a
  // token first needs it). InvalidArgument when no key is configured, a key
  // is unusable, or a JWKS URL is set without a fetcher.
  static StatusOr<std::unique_ptr<TokenVerifier>> Create(
      const IdentityOptions& auth, http::HttpClientFactory* jwks_fetcher = nullptr);
  ~TokenVerifier();
  TokenVerifier(const TokenVerifier&) = delete;
  TokenVerifier& operator=(const TokenVerifier&) = delete;

  // Verifies an "Authorization" header value "Bearer <jwt>" with the process
  // clock. Unauthenticated on any problem, with a message fit for the user.
  StatusOr<Principal> Authenticate(std::string_view authorization_header) const;
  // Verifies a bare JWT at `now_seconds` (Unix time).
  StatusOr<Principal> Verify(std::string_view jwt, int64_t now_seconds) const;

  bool hs256_enabled() const { return accepts_.hs256; }
  bool rs256_enabled() const { return accepts_.rs256_pem; }
  // Keys from a JWKS file or URL (RS256, ES256).
  bool jwks_enabled() const { return accepts_.jwks; }

 private:
  struct Accepted {
    bool hs256 = false;
    bool rs256_pem = false;
    bool jwks = false;
  };
  TokenVerifier() = default;
  bool AlgorithmAccepted(const std::string& alg) const;
  Status CheckSignature(std::string_view jwt, const std::string& alg, const std::string& kid) const;

  Accepted accepts_;
  // The configured keys first, then the JWKS URL's (which may fetch).
  std::vector<std::unique_ptr<KeySource>> key_sources_;
  ClaimMapping mapping_;
  std::string issuer_;    // empty: not checked
  std::string audience_;  // empty: not checked
  int64_t leeway_seconds_ = 0;
};

// Mints a token for `principal` valid for `ttl` (negative makes an expired
// token, useful in tests), with iss and aud from the options when set.
// RS256 when a private key file is configured, else HS256 with the secret;
// InvalidArgument when neither is. For `export-center token` and tests.
StatusOr<std::string> MintToken(const IdentityOptions& auth, const Principal& principal,
                                std::chrono::seconds ttl);

}  // namespace export_center::identity
