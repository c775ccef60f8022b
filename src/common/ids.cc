#include "common/ids.h"

#include <openssl/rand.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "common/mutex.h"

namespace export_center {
namespace {

constexpr int64_t kEpochMs = 1704067200000;  // 2024-01-01T00:00:00Z
}  // namespace

IdGenerator::IdGenerator(int node) : node_(((node % kNodeCount) + kNodeCount) % kNodeCount) {}

int64_t IdGenerator::Next() {
  MutexLock lock(&mu_);
  // The process clock only makes ids unique and ordered; it never decides
  // correctness (leases and deadlines use the database clock).
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count() -
                kEpochMs;
  if (now <= last_ms_) {
    now = last_ms_;
    sequence_ = (sequence_ + 1) & 0xFFF;
    if (sequence_ == 0) now = ++last_ms_;  // sequence exhausted: borrow the next millisecond
  } else {
    sequence_ = 0;
  }
  last_ms_ = now;
  return (now << 22) | (int64_t{node_} << 12) | sequence_;
}

int IdNodeOf(int64_t id) { return static_cast<int>((id >> 12) & (IdGenerator::kNodeCount - 1)); }

int64_t NextId() {
  static IdGenerator generator(0);
  return generator.Next();
}

bool SecureRandomBytes(void* out, size_t size) {
  return RAND_bytes(static_cast<unsigned char*>(out), static_cast<int>(size)) == 1;
}

std::string NewUuid() {
  unsigned char b[16];
  if (!SecureRandomBytes(b, sizeof b)) {
    std::fprintf(stderr, "NewUuid: the random source failed; stopping rather than reuse ids\n");
    std::fflush(stderr);
    std::abort();
  }
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
