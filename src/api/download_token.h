#pragma once
// Short-lived signed download URLs (docs/http-api.md): the download link is
// signed when the user clicks, never stored with the file, so a forwarded
// link dies within minutes.
//
// Token = base64url(JSON grant) "." base64url(HMAC-SHA256(secret, context)),
// where the MAC covers a version prefix and the encoded grant (signed_json.h). The grant
// names the task, the tenant and the user who asked (for the audit log), and
// the type's required-permission the signer held when signing: the link
// carries the signer's right, checked at signing time
// (docs/http-api.md#permission-re-check) — and the permissions of the type's
// governed columns the signer held, from which following the link decides the
// signer's column policy (docs/http-api.md#column-governance-of-downloads).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::api {

struct DownloadGrant {
  int64_t task_id = 0;
  std::string tenant;
  std::string user;
  int64_t expires_at_ms = 0;  // Unix epoch ms
  std::string permission{};   // required-permission held at signing; empty if none
  // The permissions of the type's column rules the signer held at signing.
  std::vector<std::string> column_permissions{};
};

std::string SignDownloadGrant(std::string_view secret, const DownloadGrant& grant);

// Checks the shape and the signature (constant time) and returns the grant.
// PermissionDenied for anything malformed or forged. Expiry is the caller's
// check (it answers a different HTTP status).
StatusOr<DownloadGrant> OpenDownloadGrant(std::string_view secret, std::string_view token);

}  // namespace export_center::api
