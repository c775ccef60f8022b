// Claim mapping (identity/claim_mapping.h): paths, nested claims, permission shapes
// and the prefix; a Keycloak-shaped token through TokenVerifier.

#include "identity/claim_mapping.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/digest.h"
#include "common/encoding.h"
#include "identity/token_verifier.h"

namespace export_center::identity {
namespace {

using json = nlohmann::json;

json Keycloak() {
  return json::parse(R"({
    "exp": 1900000000, "iat": 1799999000,
    "iss": "https://sso.example.com/realms/main", "aud": ["export-center", "account"],
    "sub": "f3c1a2b4-uuid", "preferred_username": "alice",
    "org": {"tenant": "t7"}, "app": "MERCHANT",
    "realm_access": {"roles": ["offline_access", "export:order:read", "export:audit"]},
    "scope": "openid profile export:download:all  email",
    "https://example.com/claims.roles": ["export:namespaced"]
  })");
}

TEST(FindClaim, TopLevelNameFirstThenNestedPath) {
  const json claims = Keycloak();
  ASSERT_NE(FindClaim(claims, "realm_access.roles"), nullptr);
  EXPECT_TRUE(FindClaim(claims, "realm_access.roles")->is_array());
  EXPECT_EQ(*FindClaim(claims, "org.tenant"), "t7");
  ASSERT_NE(FindClaim(claims, "https://example.com/claims.roles"), nullptr);
  EXPECT_EQ(FindClaim(claims, "org.tenant.deeper"), nullptr);
  EXPECT_EQ(FindClaim(claims, "org.missing"), nullptr);
  EXPECT_EQ(FindClaim(claims, "scope.x"), nullptr);  // not an object
  EXPECT_EQ(FindClaim(claims, ""), nullptr);
  EXPECT_EQ(FindClaim(json::array(), "a"), nullptr);
}

TEST(MapClaims, DefaultsReadTheCentersOwnClaims) {
  const json claims = {
      {"sub", "bob"}, {"tenant_id", "t1"}, {"app_code", "PLATFORM"}, {"perms", {"a", "b"}}};
  auto mapped = MapClaims(claims, ClaimMapping{});
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(mapped->user, "bob");
  EXPECT_EQ(mapped->permissions, (std::vector<std::string>{"a", "b"}));
  // The default claim is an array: a string there is refused, not split.
  json string_perms = claims;
  string_perms["perms"] = "a b";
  EXPECT_FALSE(MapClaims(string_perms, ClaimMapping{}).ok());
}

TEST(MapClaims, KeycloakShapeWithPrefixScopeAndRoles) {
  ClaimMapping mapping;
  mapping.user = "preferred_username";
  mapping.tenant = "org.tenant";
  mapping.app = "app";
  mapping.permissions = {"realm_access.roles", "scope", "https://example.com/claims.roles"};
  mapping.permission_prefix = "export:";
  auto mapped = MapClaims(Keycloak(), mapping);
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ(mapped->user, "alice");
  EXPECT_EQ(mapped->tenant, "t7");
  EXPECT_EQ(mapped->app, "MERCHANT");
  EXPECT_EQ(mapped->permissions,
            (std::vector<std::string>{"order:read", "audit", "download:all", "namespaced"}));
  // Without a prefix every value counts, duplicates once, empty scope items skipped.
  mapping.permission_prefix.clear();
  mapping.permissions = {"scope", "scope"};
  mapped = MapClaims(Keycloak(), mapping);
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(mapped->permissions,
            (std::vector<std::string>{"openid", "profile", "export:download:all", "email"}));
}

TEST(MapClaims, RefusesMissingOrMisshapenClaimsNamingThem) {
  ClaimMapping mapping;
  mapping.user = "preferred_username";
  mapping.tenant = "org.tenant";
  mapping.app = "app";
  json claims = Keycloak();
  claims["org"]["tenant"] = 7;
  auto refused = MapClaims(claims, mapping);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("org.tenant"), std::string::npos);
  claims = Keycloak();
  claims["preferred_username"] = "";
  EXPECT_FALSE(MapClaims(claims, mapping).ok());
  claims = Keycloak();
  claims.erase("app");
  EXPECT_FALSE(MapClaims(claims, mapping).ok());
  mapping.app_default = "PLATFORM";
  auto defaulted = MapClaims(claims, mapping);
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ(defaulted->app, "PLATFORM");
  mapping.permissions = {"realm_access"};  // an object
  EXPECT_FALSE(MapClaims(claims, mapping).ok());
  mapping.permissions = {"realm_access.roles"};
  claims["realm_access"]["roles"] = {"a", 1};
  EXPECT_FALSE(MapClaims(claims, mapping).ok());
  mapping.permissions = {"absent.path"};  // absent: no permissions, not an error
  claims = Keycloak();
  auto none = MapClaims(claims, mapping);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->permissions.empty());
}

TEST(MapClaims, TheVerifierUsesTheConfiguredMapping) {
  IdentityOptions auth;
  auth.jwt_hs256_secret = "0123456789abcdef0123456789abcdef";
  auth.jwt_issuer = "https://sso.example.com/realms/main";
  auth.jwt_audience = "export-center";
  auth.claim_user = "preferred_username";
  auth.claim_tenant = "org.tenant";
  auth.claim_app = "app";
  auth.claim_permissions = {"realm_access.roles"};
  auth.permission_prefix = "export:";
  auto verifier = TokenVerifier::Create(auth);
  ASSERT_TRUE(verifier.ok());
  const std::string signed_part =
      Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})") + "." + Base64UrlEncode(Keycloak().dump());
  const std::string jwt =
      signed_part + "." + Base64UrlEncode(HmacSha256(auth.jwt_hs256_secret, signed_part));
  auto p = (*verifier)->Verify(jwt, 1800000000);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->user, "alice");
  EXPECT_EQ(p->tenant, "t7");
  EXPECT_EQ(p->app, task::AppCode::kMerchant);
  EXPECT_TRUE(p->HasPerm("order:read"));
  EXPECT_FALSE(p->HasPerm("offline_access"));
}

}  // namespace
}  // namespace export_center::identity
