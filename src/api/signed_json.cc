#include "api/signed_json.h"

#include "common/digest.h"
#include "common/encoding.h"
#include "common/json_dump.h"
#include "common/strict_json.h"

namespace export_center::api {
namespace {

std::string Mac(std::string_view secret, std::string_view context, std::string_view encoded) {
  return HmacSha256(secret, std::string(context) + std::string(encoded));
}

}  // namespace

std::string SignJson(std::string_view secret, std::string_view context,
                     const nlohmann::json& object) {
  std::string encoded = Base64UrlEncode(DumpTolerant(object));
  return encoded + "." + Base64UrlEncode(Mac(secret, context, encoded));
}

std::optional<nlohmann::json> OpenSignedJson(std::string_view secret, std::string_view context,
                                             std::string_view value, size_t max_bytes) {
  size_t dot = value.find('.');
  if (value.size() > max_bytes || dot == std::string_view::npos) return std::nullopt;
  auto mac = Base64UrlDecode(value.substr(dot + 1));
  if (!mac || !SecureEquals(*mac, Mac(secret, context, value.substr(0, dot)))) return std::nullopt;
  auto bytes = Base64UrlDecode(value.substr(0, dot));
  if (!bytes) return std::nullopt;
  auto body = ParseStrictJson(*bytes);
  if (!body.ok() || !body->is_object()) return std::nullopt;
  return std::move(body).value();
}

}  // namespace export_center::api
