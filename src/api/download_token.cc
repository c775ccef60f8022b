#include "api/download_token.h"

#include <nlohmann/json.hpp>

#include "api/signed_json.h"
#include "common/ids.h"

namespace export_center::api {
namespace {

// Domain separation: a MAC made for something else never opens a download.
constexpr std::string_view kMacContext = "export-center/download/v1.";
// Room for the column permissions of up to 100 governed columns.
constexpr size_t kMaxTokenBytes = 8192;

}  // namespace

std::string SignDownloadGrant(std::string_view secret, const DownloadGrant& grant) {
  nlohmann::json body = {{"tid", std::to_string(grant.task_id)},
                         {"ten", grant.tenant},
                         {"sub", grant.user},
                         {"exp", grant.expires_at_ms}};
  if (!grant.permission.empty()) body["prm"] = grant.permission;
  // Always written: a grant without it (signed before column governance of
  // downloads) opens with no column permission, which fails closed.
  body["cpm"] = grant.column_permissions;
  return SignJson(secret, kMacContext, body);
}

StatusOr<DownloadGrant> OpenDownloadGrant(std::string_view secret, std::string_view token) {
  const Status bad = PermissionDenied("invalid download link");
  auto body = OpenSignedJson(secret, kMacContext, token, kMaxTokenBytes);
  if (!body) return bad;
  const auto& j = *body;
  if (!j.contains("tid") || !j["tid"].is_string() || !j.contains("ten") || !j["ten"].is_string() ||
      !j.contains("sub") || !j["sub"].is_string() || !j.contains("exp") ||
      !j["exp"].is_number_integer()) {
    return bad;
  }
  if (j.contains("prm") && !j["prm"].is_string()) return bad;
  std::vector<std::string> column_permissions;
  if (auto cpm = j.find("cpm"); cpm != j.end()) {
    if (!cpm->is_array()) return bad;
    for (const auto& perm : *cpm) {
      if (!perm.is_string()) return bad;
      column_permissions.push_back(perm.get<std::string>());
    }
  }
  auto id = ParseId(j["tid"].get<std::string>());
  if (!id) return bad;
  return DownloadGrant{*id,
                       j["ten"].get<std::string>(),
                       j["sub"].get<std::string>(),
                       j["exp"].get<int64_t>(),
                       j.value("prm", std::string()),
                       std::move(column_permissions)};
}

}  // namespace export_center::api
