#include "api/download_token.h"

#include <nlohmann/json.hpp>

#include "api/signed_json.h"
#include "common/ids.h"

namespace export_center::api {
namespace {

// Domain separation: a MAC made for something else never opens a download.
constexpr std::string_view kMacContext = "export-center/download/v1.";
constexpr size_t kMaxTokenBytes = 2048;

}  // namespace

std::string SignDownloadGrant(std::string_view secret, const DownloadGrant& grant) {
  nlohmann::json body = {{"tid", std::to_string(grant.task_id)},
                         {"ten", grant.tenant},
                         {"sub", grant.user},
                         {"exp", grant.expires_at_ms}};
  if (!grant.permission.empty()) body["prm"] = grant.permission;
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
  auto id = ParseId(j["tid"].get<std::string>());
  if (!id) return bad;
  return DownloadGrant{*id, j["ten"].get<std::string>(), j["sub"].get<std::string>(),
                       j["exp"].get<int64_t>(), j.value("prm", std::string())};
}

}  // namespace export_center::api
