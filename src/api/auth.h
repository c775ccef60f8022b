#pragma once
// Authentication (JWT bearer tokens) and the access rules
// (docs/http-api.md#authentication, docs/http-api.md#access-rules).
//
// Tokens are compact JWS: HS256 with a shared secret and/or RS256 with an RSA
// public key, whichever the config enables. The header's `alg` must be one of
// the enabled ones, so "none" and the HS256-with-the-public-key confusion
// attack are refused. Claims: sub, tenant_id (string), app_code
// (PLATFORM|MERCHANT), perms (array of strings), exp (required), iss and aud
// (checked when configured: iss equal to auth.jwt-issuer, aud a string equal
// to auth.jwt-audience or an array holding it), nbf and iat (optional). Times
// use the process clock with auth.jwt-leeway-seconds of skew allowed: a token
// is an authentication artefact, not a lease
// (docs/http-api.md#authentication).
//
// Thread-safety: TokenVerifier is immutable after Create and may be shared.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/options.h"
#include "common/status.h"
#include "registry/export_definition.h"
#include "task/task.h"

namespace export_center::api {

// Grants read/download/retry/cancel on every task of the caller's tenant and app.
inline constexpr std::string_view kDownloadAllPermission = "platform:download:all";

// Who is calling, as the verified token says.
struct Principal {
  std::string user;    // sub
  std::string tenant;  // tenant_id
  task::AppCode app = task::AppCode::kPlatform;
  std::vector<std::string> perms;
  // Unix ms from which the token no longer verifies (exp + leeway); 0 for a
  // principal that came with no expiry. Live event streams end there.
  int64_t valid_until_ms = 0;

  bool HasPerm(std::string_view perm) const;
};

// RFC 4648 §5 without padding.
std::string Base64UrlEncode(std::string_view bytes);
// Strict: only the url-safe alphabet, no padding, no whitespace, unused
// trailing bits zero (one canonical spelling per value). nullopt otherwise.
std::optional<std::string> Base64UrlDecode(std::string_view text);

// Raw 32-byte HMAC-SHA256.
std::string HmacSha256(std::string_view key, std::string_view data);
// Lower-case hex SHA-256.
std::string Sha256Hex(std::string_view data);
// Constant-time equality (signatures).
bool SecureEquals(std::string_view a, std::string_view b);

class TokenVerifier {
 public:
  // Reads the RS256 public key (PEM SubjectPublicKeyInfo) when configured.
  // InvalidArgument when neither algorithm is configured or the key is unusable.
  static StatusOr<std::unique_ptr<TokenVerifier>> Create(const AuthOptions& auth);
  ~TokenVerifier();
  TokenVerifier(const TokenVerifier&) = delete;
  TokenVerifier& operator=(const TokenVerifier&) = delete;

  // Verifies an "Authorization" header value "Bearer <jwt>" with the process
  // clock. Unauthenticated on any problem, with a message fit for the user.
  StatusOr<Principal> Authenticate(std::string_view authorization_header) const;
  // Verifies a bare JWT at `now_seconds` (Unix time).
  StatusOr<Principal> Verify(std::string_view jwt, int64_t now_seconds) const;

  bool hs256_enabled() const { return !hs256_secret_.empty(); }
  bool rs256_enabled() const { return rs256_key_ != nullptr; }

 private:
  struct KeyDeleter {
    void operator()(void* key) const;
  };
  TokenVerifier() = default;
  Status CheckSignature(const std::string& alg, std::string_view signed_part,
                        const std::string& signature) const;

  std::string hs256_secret_;
  std::unique_ptr<void, KeyDeleter> rs256_key_;  // EVP_PKEY
  std::string issuer_;                           // empty: not checked
  std::string audience_;                         // empty: not checked
  int64_t leeway_seconds_ = 0;
};

// Mints a token for `principal` valid for `ttl` (negative makes an expired
// token, useful in tests), with iss and aud from the options when set.
// RS256 when a private key file is configured, else HS256 with the secret;
// InvalidArgument when neither is. For `export-center token` and tests.
StatusOr<std::string> MintToken(const AuthOptions& auth, const Principal& principal,
                                std::chrono::seconds ttl);

// ---- access rules ----------------------------------------------------------

// Tenant and app must match; the owner, or anyone with kDownloadAllPermission
// in that tenant and app. Callers answer NotFound otherwise, never revealing
// that the task exists.
bool CanAccessTask(const Principal& principal, const task::Task& task);

// The same rule as a list filter (task list, task events): the requester whose
// tasks the caller may list, or nullopt for the whole tenant and app.
std::optional<std::string> ListableRequester(const Principal& principal);

// Whether the type is offered to the caller: its app-scope equals the token's
// app_code and its required-permission (if any) is held. Disabled types are
// not offered.
bool CanSeeType(const Principal& principal, const registry::ExportDefinition& def);

// Creation and manual retry (docs/task-lifecycle.md#when-definition-values-take-effect):
// enabled (else InvalidArgument), app-scope (PermissionDenied), required-permission
// (PermissionDenied).
Status CheckCanRun(const Principal& principal, const registry::ExportDefinition& def);

}  // namespace export_center::api
