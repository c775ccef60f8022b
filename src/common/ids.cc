#include "common/ids.h"

#include <openssl/rand.h>

#include <chrono>
#include <cstdio>

#include "common/mutex.h"

namespace export_center {
namespace {

constexpr int64_t kEpochMs = 1704067200000;  // 2024-01-01T00:00:00Z

uint64_t RandomU64() {
  uint64_t v = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&v), sizeof v);
  return v;
}

// NextId's state: the last millisecond it used and the sequence within it.
struct IdState {
  Mutex mu;
  int64_t last_ms GUARDED_BY(mu) = 0;
  int64_t sequence GUARDED_BY(mu) = 0;
};

}  // namespace

int64_t NextId() {
  static const int64_t node = static_cast<int64_t>(RandomU64() & 0x3FF);
  static IdState state;
  MutexLock lock(&state.mu);
  // The process clock only makes ids unique and ordered; it never decides
  // correctness (leases and deadlines use the database clock).
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count() - kEpochMs;
  if (now <= state.last_ms) {
    now = state.last_ms;
    state.sequence = (state.sequence + 1) & 0xFFF;
    // Sequence exhausted: borrow the next millisecond.
    if (state.sequence == 0) now = ++state.last_ms;
  } else {
    state.sequence = 0;
  }
  state.last_ms = now;
  return (now << 22) | (node << 12) | state.sequence;
}

std::string NewUuid() {
  unsigned char b[16];
  RAND_bytes(b, sizeof b);
  b[6] = (b[6] & 0x0F) | 0x40;
  b[8] = (b[8] & 0x3F) | 0x80;
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

std::optional<int64_t> ParseId(std::string_view text) {
  if (text.empty() || text.size() > 19 || text[0] == '0') return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

}  // namespace export_center
