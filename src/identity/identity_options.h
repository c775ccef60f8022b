#pragma once
// The options of the identity room (src/identity/): which tokens are accepted,
// the keys they are verified with, and which claims say who is calling
// (docs/http-api.md#authentication, docs/http-api.md#claim-mapping).
// config/ fills them from the `auth:` section (as part of api::AuthOptions).

#include <cstdint>
#include <string>
#include <vector>

namespace export_center::identity {

struct IdentityOptions {
  std::string jwt_hs256_secret;  // env EXPORT_CENTER_JWT_SECRET
  std::string jwt_rs256_public_key_file;
  std::string jwt_rs256_private_key_file;  // only for `export-center token`
  // The token's `iss` must equal jwt_issuer and its `aud` (a string, or an
  // array per RFC 7519 §4.1.3) must hold jwt_audience. config/ requires both;
  // empty skips the check (TokenVerifier built in code, e.g. in tests).
  // `export-center token` writes both into the tokens it mints.
  std::string jwt_issuer;
  std::string jwt_audience;
  // Clock skew allowed between the issuer and this server, applied to exp
  // (accepted until exp + leeway), nbf (from nbf - leeway) and iat (refused
  // when more than leeway in the future).
  int jwt_leeway_seconds = 30;
  // Keys of the platform's identity provider (docs/http-api.md#authentication):
  // a JWK Set fetched from jwks_url (RS256, ES256) and/or read from jwks_file
  // (the offline alternative). Fetched keys are cached; a token naming an
  // unknown `kid` refetches at most once per jwks_refresh_min_interval_seconds,
  // and the set is refetched on use once older than half of jwks_max_age_seconds.
  // A failed fetch keeps the keys already held, until jwks_max_age_seconds:
  // an older set verifies nothing until a fetch succeeds.
  std::string jwks_url;
  std::string jwks_file;
  int jwks_refresh_min_interval_seconds = 30;
  int jwks_max_age_seconds = 3600;
  int jwks_fetch_timeout_ms = 3000;     // the whole fetch, connect included
  int64_t jwks_max_bytes = 256 * 1024;  // a larger answer is refused, keys kept
  std::string jwks_ca_cert_file;        // PEM bundle instead of the system store
  // Which claim holds what (docs/http-api.md#claim-mapping). A path may be
  // nested ("realm_access.roles"); a claim whose own name holds the dots
  // ("https://example.com/roles") is found first.
  std::string claim_user = "sub";
  std::string claim_tenant = "tenant_id";
  std::string claim_app = "app_code";
  // The app code of a token without the app claim; empty: the claim is required.
  std::string app_code_default;
  // Each path holds a JSON array of strings or one space-separated string
  // (OAuth `scope`); the principal's permissions are their union.
  std::vector<std::string> claim_permissions = {"perms"};
  // When set, only values starting with it are permissions, without it
  // ("export:order:read" → "order:read"); others ("openid") are ignored.
  std::string permission_prefix;
};

}  // namespace export_center::identity
