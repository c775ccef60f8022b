#include "sdk/snapshot_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <cstdio>

#include "sdk/provider_server.h"
#include "sdk/secret_check.h"

namespace export_center::sdk {

SnapshotSigner::SnapshotSigner(std::string secret) : secret_(std::move(secret)) {
  RequireSecret("the snapshot secret", secret_, kMinSnapshotSecretBytes);
}

std::string SnapshotSigner::Mac(const BatchRequest& request, int64_t max_id) const {
  // Fields joined by a byte that none of them may contain.
  std::string message = "v1\n" + request.export_type + "\n" + request.tenant_id + "\n" +
                        request.app_code + "\n" + std::to_string(request.task_id) + "\n" +
                        std::to_string(max_id);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < mac_len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", mac[i]);
    hex += buf;
  }
  return hex;
}

std::string SnapshotSigner::Sign(const BatchRequest& request, int64_t max_id) const {
  return "v1." + std::to_string(max_id) + "." + Mac(request, max_id);
}

std::optional<int64_t> SnapshotSigner::Verify(const BatchRequest& request,
                                              std::string_view token) const {
  if (secret_.empty() || token.substr(0, 3) != "v1.") return std::nullopt;
  std::string_view rest = token.substr(3);
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 19) return std::nullopt;
  int64_t max_id = 0;
  auto res = std::from_chars(rest.data(), rest.data() + dot, max_id);
  if (res.ec != std::errc() || res.ptr != rest.data() + dot || max_id < 0) return std::nullopt;
  // Re-encode so "v1.007.<mac>" cannot pass as "v1.7.<mac>".
  if (std::to_string(max_id) != rest.substr(0, dot)) return std::nullopt;
  std::string expected = Mac(request, max_id);
  std::string_view given = rest.substr(dot + 1);
  if (given.size() != expected.size() ||
      CRYPTO_memcmp(given.data(), expected.data(), expected.size()) != 0) {
    return std::nullopt;
  }
  return max_id;
}

}  // namespace export_center::sdk
