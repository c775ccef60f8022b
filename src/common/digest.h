#pragma once
// Digests and MACs over OpenSSL: the one place the center computes them for
// whole values (a streaming SHA-256 of a file is Sha256Sink, byte_sink.h).
// Results are raw bytes; HexEncode/Base64Encode (encoding.h) spell them.
//
// Pure functions, thread-safe.

#include <string>
#include <string_view>

namespace export_center {

// The 32-byte SHA-256 of `data`.
std::string Sha256(std::string_view data);
// Lower-case hex of Sha256(data): 64 characters.
std::string Sha256Hex(std::string_view data);

// The 32-byte HMAC-SHA256 of `data` under `key` (RFC 2104).
std::string HmacSha256(std::string_view key, std::string_view data);
// The 20-byte HMAC-SHA1: only what a peer's protocol asks for (RocketMQ's ACL
// signature); never for anything the center designs.
std::string HmacSha1(std::string_view key, std::string_view data);

// Constant-time equality of two MACs or signatures (CRYPTO_memcmp): the
// time does not depend on where they differ.
bool SecureEquals(std::string_view a, std::string_view b);

}  // namespace export_center
