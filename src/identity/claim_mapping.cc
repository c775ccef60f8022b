#include "identity/claim_mapping.h"

#include <algorithm>

namespace export_center::identity {
namespace {

using json = nlohmann::json;

// Nested objects deeper than this are not walked (a path is config, short).
constexpr int kMaxPathSegments = 16;

bool IsScopeString(std::string_view path) {
  const size_t dot = path.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? path : path.substr(dot + 1);
  return last == "scope" || last == "scp";
}

// Unauthenticated unless the claim is a non-empty string.
StatusOr<std::string> RequiredString(const json& claims, const std::string& path) {
  const json* claim = FindClaim(claims, path);
  if (claim == nullptr || !claim->is_string() || claim->get_ref<const std::string&>().empty()) {
    return Unauthenticated("token has no string " + path + " claim");
  }
  return claim->get<std::string>();
}

void AddPermission(std::string value, const std::string& prefix, std::vector<std::string>* out) {
  if (value.empty()) return;
  if (!prefix.empty()) {
    if (value.size() <= prefix.size() || value.compare(0, prefix.size(), prefix) != 0) return;
    value.erase(0, prefix.size());
  }
  if (std::find(out->begin(), out->end(), value) == out->end()) out->push_back(std::move(value));
}

Status AddPermissions(const json& claims, const std::string& path, const std::string& prefix,
                      std::vector<std::string>* out) {
  const json* claim = FindClaim(claims, path);
  if (claim == nullptr) return Status::Ok();
  if (IsScopeString(path) && claim->is_string()) {
    const std::string& scope = claim->get_ref<const std::string&>();
    size_t start = 0;
    while (start <= scope.size()) {
      size_t space = scope.find(' ', start);
      if (space == std::string::npos) space = scope.size();
      AddPermission(scope.substr(start, space - start), prefix, out);
      start = space + 1;
    }
    return Status::Ok();
  }
  if (!claim->is_array()) return Unauthenticated("token " + path + " claim must be an array");
  for (const json& value : *claim) {
    if (!value.is_string()) return Unauthenticated("token " + path + " claim must hold strings");
    AddPermission(value.get<std::string>(), prefix, out);
  }
  return Status::Ok();
}

}  // namespace

ClaimMapping ClaimMapping::FromOptions(const IdentityOptions& auth) {
  return {auth.claim_user,       auth.claim_tenant,      auth.claim_app,
          auth.app_code_default, auth.claim_permissions, auth.permission_prefix};
}

const json* FindClaim(const json& claims, std::string_view path) {
  if (!claims.is_object() || path.empty()) return nullptr;
  if (auto it = claims.find(path); it != claims.end()) return &*it;
  const json* at = &claims;
  size_t start = 0;
  for (int segment = 0; segment < kMaxPathSegments; ++segment) {
    size_t dot = path.find('.', start);
    const std::string_view name =
        path.substr(start, dot == std::string_view::npos ? dot : dot - start);
    auto it = at->find(name);
    if (it == at->end()) return nullptr;
    at = &*it;
    if (dot == std::string_view::npos) return at;
    if (!at->is_object()) return nullptr;
    start = dot + 1;
  }
  return nullptr;
}

StatusOr<MappedClaims> MapClaims(const json& claims, const ClaimMapping& mapping) {
  MappedClaims out;
  EC_ASSIGN_OR_RETURN(out.user, RequiredString(claims, mapping.user));
  EC_ASSIGN_OR_RETURN(out.tenant, RequiredString(claims, mapping.tenant));
  const json* app = FindClaim(claims, mapping.app);
  if (app == nullptr && !mapping.app_default.empty()) {
    out.app = mapping.app_default;
  } else if (app != nullptr && app->is_string()) {
    out.app = app->get<std::string>();
  } else {
    return Unauthenticated("token " + mapping.app + " must be PLATFORM or MERCHANT");
  }
  for (const std::string& path : mapping.permissions) {
    EC_RETURN_IF_ERROR(AddPermissions(claims, path, mapping.permission_prefix, &out.permissions));
  }
  return out;
}

}  // namespace export_center::identity
