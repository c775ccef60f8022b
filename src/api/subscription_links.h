#pragma once
// The links a subscription's mail carries (docs/subscriptions.md#what-a-finished-run-delivers),
// signed with the API's download secret:
//   - the download link of the run's file: an ordinary signed download grant
//     (download_token.h) for the subscription's owner, carrying the
//     permissions the file was governed for at the run, short-lived, and
//     audited like every signed link when followed (via SIGNED_LINK);
//   - one unsubscribe link per recipient:
//     GET …/subscriptions/{id}/unsubscribe?r=<recipient>&sig=<mac>, where the
//     MAC is HMAC-SHA256(secret, "export-center unsubscribe v1\n" + id + "\n"
//     + lower-case recipient), base64url. It does not expire: a recipient can
//     always leave, and it can only ever remove that one recipient.
// Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

#include "api/download_token.h"
#include "registry/registry.h"
#include "task/task.h"

namespace export_center::api {

// The grant of a subscription's file: the task's requester (the owner), the
// type's required permission (re-checked when the run created the task) and
// the column permissions the file's own policy shows the owner held — a file
// governed for its owner is exactly what the link lets through.
DownloadGrant SubscriptionFileGrant(const task::Task& t, const registry::ExportDefinition& def,
                                    int64_t expires_at_ms);

// base64url(HMAC) of the recipient of subscription `id` (the `sig` parameter).
std::string UnsubscribeSignature(std::string_view secret, int64_t subscription_id,
                                 std::string_view recipient);
// Whether `sig` is that signature (constant time).
bool CheckUnsubscribeSignature(std::string_view secret, int64_t subscription_id,
                               std::string_view recipient, std::string_view sig);
// The whole link, under `base` (the server's public base URL, no trailing slash).
std::string UnsubscribeUrl(std::string_view secret, const std::string& base,
                           int64_t subscription_id, const std::string& recipient);

}  // namespace export_center::api
