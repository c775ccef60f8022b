#pragma once
// Identifiers: 64-bit task/outbox ids and UUIDs for event ids.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/mutex.h"

namespace export_center {

// Snowflake-style ids: 41 bits of milliseconds since 2024-01-01, 10 bits of
// node, 12 bits of sequence; roughly time-ordered. Ids of two generators
// never collide while their nodes differ, so the node must not be chosen at
// random: the task store takes it from the database (docs/store.md#ids).
// Thread-safe.
class IdGenerator {
 public:
  static constexpr int kNodeCount = 1024;  // 10 bits

  explicit IdGenerator(int node);  // node modulo kNodeCount
  int64_t Next();
  int node() const { return node_; }

 private:
  const int node_;
  Mutex mu_;
  int64_t last_ms_ GUARDED_BY(mu_) = 0;
  int64_t sequence_ GUARDED_BY(mu_) = 0;
};

// The node part of an id made by IdGenerator.
int IdNodeOf(int64_t id);

// A process-wide generator on node 0, for fakes and tools that have no
// database; production ids come from the store's IdGenerator.
int64_t NextId();

// Random version-4 UUID, lower case with dashes.
// Aborts with a message when the system's random source fails: an event id
// or object key that could repeat or be guessed is worse than a stopped
// process (a supervisor restarts it; nothing committed is lost).
std::string NewUuid();

// Fills `out` with `size` bytes from OpenSSL's CSPRNG. False when it fails
// (RAND_bytes did not return 1): the bytes must not be used then.
[[nodiscard]] bool SecureRandomBytes(void* out, size_t size);

// Parses an id as the API accepts it: 1-19 decimal digits, no leading zero,
// within int64. Anything else is nullopt.
std::optional<int64_t> ParseId(std::string_view text);

}  // namespace export_center
