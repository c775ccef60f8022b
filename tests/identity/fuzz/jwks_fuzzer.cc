// libFuzzer target for the JWK Set reader (identity/jwt_keys.h ParseJwks): the
// bytes a JWKS URL answers or a JWKS file holds, outside bytes either way.
// Beside "no crash, no leak" it checks what the verifier relies on: a set
// that reads holds at most kMaxJwksKeys keys, each RS256 or ES256 with a
// cjose key, no two of one kid, and key selection returns only keys of the
// asked algorithm.

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "identity/jwt_keys.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using export_center::identity::kMaxJwksKeys;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  auto keys = export_center::identity::ParseJwks(in);
  if (!keys.ok()) return 0;
  if (keys->keys().size() > kMaxJwksKeys) std::abort();
  std::set<std::string> kids;
  for (const auto& key : keys->keys()) {
    if ((key.alg != "RS256" && key.alg != "ES256") || key.jwk == nullptr) std::abort();
    if (!key.kid.empty() && !kids.insert(key.kid).second) std::abort();
    for (const auto* found : keys->Find(key.alg, key.kid)) {
      if (found->alg != key.alg) std::abort();
    }
  }
  return 0;
}
