#include "api/download_token.h"

#include <nlohmann/json.hpp>

#include "api/auth.h"
#include "api/strict_json.h"
#include "common/ids.h"
#include "common/json_dump.h"

namespace export_center::api {
namespace {

// Domain separation: a MAC made for something else never opens a download.
constexpr std::string_view kMacContext = "export-center/download/v1.";
constexpr size_t kMaxTokenBytes = 2048;

std::string Mac(std::string_view secret, std::string_view encoded_grant) {
  return HmacSha256(secret, std::string(kMacContext) + std::string(encoded_grant));
}

}  // namespace

std::string SignDownloadGrant(std::string_view secret, const DownloadGrant& grant) {
  nlohmann::json body = {{"tid", std::to_string(grant.task_id)},
                         {"ten", grant.tenant},
                         {"sub", grant.user},
                         {"exp", grant.expires_at_ms}};
  if (!grant.permission.empty()) body["prm"] = grant.permission;
  std::string encoded = Base64UrlEncode(DumpTolerant(body));
  return encoded + "." + Base64UrlEncode(Mac(secret, encoded));
}

StatusOr<DownloadGrant> OpenDownloadGrant(std::string_view secret, std::string_view token) {
  const Status bad = PermissionDenied("invalid download link");
  size_t dot = token.find('.');
  if (token.size() > kMaxTokenBytes || dot == std::string_view::npos) return bad;
  auto mac = Base64UrlDecode(token.substr(dot + 1));
  if (!mac || !SecureEquals(*mac, Mac(secret, token.substr(0, dot)))) return bad;
  auto bytes = Base64UrlDecode(token.substr(0, dot));
  if (!bytes) return bad;
  auto body = ParseStrictJson(*bytes);
  if (!body.ok() || !body->is_object()) return bad;
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
