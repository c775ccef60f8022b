#pragma once
// Claim mapping (docs/http-api.md#claim-mapping): which claims of a verified
// token hold the user, the tenant, the app scope and the permissions, so the
// platform's identity provider (Keycloak, Spring Authorization Server, a
// gateway) keeps its own token shape.
//
// A path names a claim: a top-level claim of exactly that name first (a
// namespaced claim such as "https://example.com/roles" holds dots), else the
// dot-separated walk through nested objects ("realm_access.roles").

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "identity/identity_options.h"

namespace export_center::identity {

struct ClaimMapping {
  std::string user = "sub";
  std::string tenant = "tenant_id";
  std::string app = "app_code";
  std::string app_default;  // used when the token has no app claim; empty: required
  // Each a JSON array of strings; a path ending in `scope` or `scp` instead a
  // space-separated string (RFC 8693 §4.2, the OAuth access-token scope).
  std::vector<std::string> permissions = {"perms"};
  std::string permission_prefix;  // only values with it, without it

  static ClaimMapping FromOptions(const IdentityOptions& auth);
};

// What the mapped claims say, before the app code is parsed.
struct MappedClaims {
  std::string user;
  std::string tenant;
  std::string app;
  std::vector<std::string> permissions;
};

// The claim at `path`, or nullptr.
const nlohmann::json* FindClaim(const nlohmann::json& claims, std::string_view path);

// Unauthenticated, naming the claim, when the user or tenant is missing,
// empty or not a string, the app claim is missing without a default, or a
// permission claim has the wrong shape. Absent permission claims add none.
StatusOr<MappedClaims> MapClaims(const nlohmann::json& claims, const ClaimMapping& mapping);

}  // namespace export_center::identity
