#pragma once
// SnapshotSigner: the "signed max id" snapshot token
// (docs/provider-contract.md#snapshot-guarantee).
//
// At the first batch a provider reads the current max id, signs it and
// returns the token; later batches carry it back and the provider only reads
// ids <= max id, so rows inserted during the export never leak in. The
// signature (HMAC-SHA256) is bound to the export type, tenant, app code and
// task, so a token cannot be forged, edited or replayed for another tenant.
// A token that fails verification is a permanent 400: retrying with the
// same token cannot succeed. Thread-safe (immutable after construction).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace export_center::sdk {

struct BatchRequest;

class SnapshotSigner {
 public:
  // Throws std::invalid_argument when `secret` is empty, shorter than
  // kMinSnapshotSecretBytes or an unresolved `${...}` placeholder
  // (secret_check.h): such a key would make tokens forgeable.
  explicit SnapshotSigner(std::string secret);

  // "v1.<maxId>.<hex hmac>".
  std::string Sign(const BatchRequest& request, int64_t max_id) const;
  // The max id, or nullopt when the token is garbled, forged or belongs to
  // another task.
  std::optional<int64_t> Verify(const BatchRequest& request, std::string_view token) const;

 private:
  std::string Mac(const BatchRequest& request, int64_t max_id) const;

  std::string secret_;
};

}  // namespace export_center::sdk
