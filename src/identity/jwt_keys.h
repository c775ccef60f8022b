#pragma once
// The keys JWT signatures are verified with (docs/http-api.md#authentication),
// behind one seam: a KeySource answers "which keys may have signed a token
// with this alg and kid". Three sources, one interface:
//   - the configured keys (HS256 secret, RS256 PEM file, a static JWKS file),
//     fixed at start (StaticKeySource);
//   - a JWKS URL (JwksUrlKeySource): fetched through the HttpClient seam with a
//     deadline and a size cap, cached, refetched when a token names an unknown
//     `kid` (at most once per interval) or once the set is older than half its
//     max age, and kept when a fetch fails, so a broken or hostile endpoint
//     costs new keys, never the keys already held — until max age: a set
//     older than that verifies nothing until a fetch succeeds (a withdrawn key
//     must stop working even while the endpoint is unreachable).
// Keys are cjose JWKs (libcjose, docs/http-api.md#jose-library); the JWK Set
// document is read by ParseJwks, which refuses what it cannot use safely.
//
// Threads: KeySet is immutable; every KeySource is thread-safe.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "http/http_client.h"

struct _cjose_jwk_int;  // cjose_jwk_t

namespace export_center::identity {

// One key able to verify one algorithm: "HS256" (oct), "RS256" (RSA ≥ 2048
// bits) or "ES256" (EC P-256).
struct VerificationKey {
  std::string alg;
  std::string kid;  // empty: the key has none (a configured secret or PEM key)
  std::shared_ptr<_cjose_jwk_int> jwk;
};

class KeySet {
 public:
  KeySet() = default;
  explicit KeySet(std::vector<VerificationKey> keys) : keys_(std::move(keys)) {}

  // The keys for `alg`: with a `kid`, only the one of that kid; without, all
  // of that algorithm (a key without kid matches any token's kid: a
  // configured key is trusted for its algorithm whatever the token says).
  std::vector<const VerificationKey*> Find(std::string_view alg, std::string_view kid) const;
  bool HasKid(std::string_view kid) const;
  const std::vector<VerificationKey>& keys() const { return keys_; }

 private:
  std::vector<VerificationKey> keys_;
};

// At most this many keys in one JWK Set (identity providers publish a handful).
inline constexpr size_t kMaxJwksKeys = 64;

// Reads a JWK Set (RFC 7517 §5) of public signing keys. Kept: RSA keys of at
// least 2048 bits and EC P-256 keys whose `use` (if any) is "sig" and whose
// `alg` (if any) is RS256 / ES256. Skipped: other key types, curves,
// algorithms and encryption keys — an identity provider lists those too.
// Refused (InvalidArgument): a document that is not a strict JSON object with
// a "keys" array, a key that is not an object, a kept key cjose cannot
// import, two keys of one kid, more than kMaxJwksKeys keys.
StatusOr<KeySet> ParseJwks(std::string_view document);

// The key of an HS256 secret.
StatusOr<VerificationKey> Hs256Key(std::string_view secret);
// The key of an RSA public key in PEM (SubjectPublicKeyInfo, ≥ 2048 bits).
StatusOr<VerificationKey> Rs256KeyFromPem(std::string_view pem, const std::string& what);

class KeySource {
 public:
  virtual ~KeySource() = default;
  // The keys that may verify a token of `alg` and `kid` (kid may be empty).
  // May block for one bounded fetch. Never throws.
  virtual std::vector<VerificationKey> KeysFor(std::string_view alg, std::string_view kid) = 0;
};

class StaticKeySource : public KeySource {
 public:
  explicit StaticKeySource(KeySet keys) : keys_(std::move(keys)) {}
  std::vector<VerificationKey> KeysFor(std::string_view alg, std::string_view kid) override;

 private:
  const KeySet keys_;
};

struct JwksUrlOptions {
  std::string url;
  std::chrono::seconds refresh_min_interval{30};
  std::chrono::seconds max_age{3600};
  std::chrono::milliseconds fetch_timeout{3000};
  int64_t max_bytes = 256 * 1024;
  http::ClientTlsSettings tls;
};

class JwksUrlKeySource : public KeySource {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // No I/O here: the first token fetches. InvalidArgument for a URL the
  // client cannot use. `clock` is for tests.
  static StatusOr<std::unique_ptr<JwksUrlKeySource>> Create(const JwksUrlOptions& options,
                                                            http::HttpClientFactory* factory,
                                                            Clock clock = {});

  std::vector<VerificationKey> KeysFor(std::string_view alg, std::string_view kid) override;

  // Fetches now (unless one ran within the minimum interval) and keeps the new
  // set when it reads well. The status of this attempt; Ok when skipped.
  Status Refresh();
  // How many fetches were sent (for tests and `check`).
  int fetch_count() const;

 private:
  JwksUrlKeySource(JwksUrlOptions options, std::unique_ptr<http::HttpClient> client, Clock clock);
  std::shared_ptr<const KeySet> Current() const;
  // The held set while younger than max age; an empty set after.
  std::shared_ptr<const KeySet> Fresh() const;
  bool Stale() const;    // due for a refetch: older than half of max age, or never fetched
  bool Expired() const;  // older than max age (or never fetched)
  bool Fetching() const;
  StatusOr<KeySet> Fetch() REQUIRES(fetch_mu_);

  const JwksUrlOptions options_;
  const std::string path_;
  const Clock clock_;
  // One fetch at a time. A token whose kid the held set knows never waits for
  // it (the held set answers until the fetch lands); one naming an unknown kid,
  // or arriving past max age with no fetch running, waits at most the deadline.
  Mutex fetch_mu_;
  std::unique_ptr<http::HttpClient> client_ GUARDED_BY(fetch_mu_);
  mutable Mutex mu_;
  std::shared_ptr<const KeySet> keys_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_attempt_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point fetched_at_ GUARDED_BY(mu_);
  bool attempted_ GUARDED_BY(mu_) = false;
  bool fetching_ GUARDED_BY(mu_) = false;
  int fetch_count_ GUARDED_BY(mu_) = 0;
};

}  // namespace export_center::identity
