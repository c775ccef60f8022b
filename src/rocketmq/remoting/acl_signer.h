#pragma once
// AclSigner: signs Remoting requests for a broker with ACL (authentication)
// enabled, as RocketMQ's Java client does with its RPC hook (docs/rocketmq.md#acl).
//
// The broker (5.x ACL 2.0, and 4.x/5.x ACL 1.0 alike) recomputes the signature
// from what it received and refuses the request with NO_PERMISSION when it
// differs, so the content must be byte for byte what the broker rebuilds:
//
//   1. the ext field AccessKey = the access key is added to the request;
//   2. every ext field's VALUE except Signature, in ascending order of the
//      field NAMES (byte order: "AccessKey" < "a" < "b"), concatenated, as UTF-8;
//   3. followed by the body bytes;
//   4. HMAC-SHA1 with the secret key, Base64 — the ext field Signature.
//
// Pure functions: thread-safe.

#include <map>
#include <string>
#include <string_view>

#include "rocketmq/remoting/remoting_command.h"

namespace export_center::rocketmq::remoting {

// The ext field names the broker reads (RocketMQ's SessionCredentials).
inline constexpr char kAccessKeyField[] = "AccessKey";
inline constexpr char kSignatureField[] = "Signature";

// An access key and its secret: a 5.x user's name and password, or a 4.x
// plain_acl.yml account's accessKey and secretKey.
struct AclCredentials {
  std::string access_key;
  std::string secret_key;

  // Unsigned requests when the access key is empty.
  bool enabled() const { return !access_key.empty(); }
};

// Base64(HMAC-SHA1(secret, values of `ext_fields` but Signature in key order + body)).
std::string AclSignature(const std::map<std::string, std::string>& ext_fields,
                         std::string_view body, std::string_view secret_key);

// Adds AccessKey and Signature to `request` (replacing any earlier ones, so
// signing a resent request again is right). Does nothing when `credentials`
// are not enabled.
void SignRequest(const AclCredentials& credentials, RemotingCommand* request);

}  // namespace export_center::rocketmq::remoting
