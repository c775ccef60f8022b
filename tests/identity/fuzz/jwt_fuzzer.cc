// libFuzzer target for JWT verification (identity/token_verifier.h): the bearer header, the
// base64url segments, the strict JSON of the JOSE header and the claims, the
// algorithm choice (HS256 and RS256 both enabled, so "none" and algorithm
// confusion are reachable) and every claim check.
//
// Each input is tried twice: as sent (a token and an Authorization header),
// and re-signed with the HS256 secret — the bytes before the first NUL are
// the JOSE header, the rest the claims — so the checks behind the signature
// see fuzzed claims too. Properties checked beside "no crash, no leak":
// a decoded base64url segment encodes back to the same text (one canonical
// spelling), and a verified principal has a user and a tenant. The re-signed
// token also meets a verifier with iss, aud and the clock-skew leeway set.

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/digest.h"
#include "common/encoding.h"
#include "identity/token_verifier.h"

namespace {

using export_center::Base64UrlDecode;
using export_center::Base64UrlEncode;
using export_center::HmacSha256;
using export_center::identity::IdentityOptions;
using export_center::identity::TokenVerifier;

constexpr char kSecret[] = "fuzz-hs256-secret-0123456789abcdef";
constexpr int64_t kNow = 1800000000;  // 2027-01-15: seeds expire in 2100

// An RS256 public key of our own, written where IdentityOptions reads it.
std::string WritePublicKey() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  if (key == nullptr) std::abort();
  char path[] = "/tmp/ec-jwt-fuzzer-XXXXXX";
  int fd = mkstemp(path);
  FILE* f = fdopen(fd, "w");
  if (f == nullptr || PEM_write_PUBKEY(f, key) != 1) std::abort();
  fclose(f);
  EVP_PKEY_free(key);
  return path;
}

// `checked`: iss, aud and the leeway configured too, as config/ requires.
const TokenVerifier& Verifier(bool checked = false) {
  static const TokenVerifier* plain = nullptr;
  static const TokenVerifier* with_claims = nullptr;
  const TokenVerifier*& verifier = checked ? with_claims : plain;
  if (verifier != nullptr) return *verifier;
  verifier = [checked] {
    IdentityOptions auth;
    auth.jwt_hs256_secret = kSecret;
    if (checked) {
      auth.jwt_issuer = "https://sso.example.com";
      auth.jwt_audience = "export-center";
      auth.jwt_leeway_seconds = 30;
    }
    const std::string pem = WritePublicKey();
    auth.jwt_rs256_public_key_file = pem;
    auto created = TokenVerifier::Create(auth);
    unlink(pem.c_str());
    if (!created.ok()) std::abort();
    return created->release();
  }();
  return *verifier;
}

void CheckPrincipal(const export_center::StatusOr<export_center::identity::Principal>& p) {
  if (p.ok() && (p->user.empty() || p->tenant.empty())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const TokenVerifier& verifier = Verifier();

  CheckPrincipal(verifier.Verify(in, kNow));
  CheckPrincipal(verifier.Authenticate(in));
  CheckPrincipal(verifier.Authenticate("Bearer " + std::string(in)));

  if (auto decoded = Base64UrlDecode(in); decoded && Base64UrlEncode(*decoded) != in) {
    std::abort();  // two spellings of one value
  }

  const size_t nul = in.find('\0');
  if (nul != std::string_view::npos) {
    const std::string signed_part =
        Base64UrlEncode(in.substr(0, nul)) + "." + Base64UrlEncode(in.substr(nul + 1));
    const std::string jwt = signed_part + "." + Base64UrlEncode(HmacSha256(kSecret, signed_part));
    CheckPrincipal(verifier.Verify(jwt, kNow));
    CheckPrincipal(Verifier(/*checked=*/true).Verify(jwt, kNow));
  }
  return 0;
}
