#include "render/encryption/file_key_material.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstring>
#include <memory>

#include "common/utf8.h"
#include "render/file_encryption.h"

namespace export_center::render {
namespace encryption {
namespace {

constexpr size_t kAgileBytes = kAgileSaltBytes + 16 + kAgileHashBytes + 2 * kAgileKeyBytes;
constexpr size_t kZipKeyBytes = 16 + 32 + 32 + 2;

// Wipes a secret buffer when it goes out of scope.
template <typename T>
class Wiped {
 public:
  explicit Wiped(T* buffer) : buffer_(buffer) {}
  ~Wiped() { OPENSSL_cleanse(buffer_->data(), buffer_->size() * sizeof((*buffer_)[0])); }
  Wiped(const Wiped&) = delete;
  Wiped& operator=(const Wiped&) = delete;

 private:
  T* buffer_;
};

// UTF-16LE of valid UTF-8 (checked by the caller), as Agile hashes a password.
std::string Utf16Le(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size() * 2);
  auto put = [&out](uint32_t unit) {
    out.push_back(static_cast<char>(unit & 0xff));
    out.push_back(static_cast<char>(unit >> 8));
  };
  for (size_t i = 0; i < utf8.size();) {
    const auto b = static_cast<uint8_t>(utf8[i]);
    const int len = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    uint32_t cp = len == 1 ? b : len == 2 ? b & 0x1f : len == 3 ? b & 0x0f : b & 0x07;
    for (int k = 1; k < len && i + k < utf8.size(); ++k) {
      cp = (cp << 6) | (static_cast<uint8_t>(utf8[i + k]) & 0x3f);
    }
    i += len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      put(0xd800 | (cp >> 10));
      put(0xdc00 | (cp & 0x3ff));
    } else {
      put(cp);
    }
  }
  return out;
}

Status RandomBytes(uint8_t* out, size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1) return Internal("file key: no random bytes");
  return Status::Ok();
}

// AES-256-CBC without padding (every input here is whole blocks).
Status AesCbcEncrypt(const uint8_t* key, const uint8_t* iv, const uint8_t* in, size_t n,
                     uint8_t* out) {
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                      EVP_CIPHER_CTX_free);
  int len = 0;
  if (ctx == nullptr || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_cbc(), nullptr, key, iv) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1 ||
      EVP_EncryptUpdate(ctx.get(), out, &len, in, static_cast<int>(n)) != 1 ||
      static_cast<size_t>(len) != n) {
    return Internal("file key: AES-256-CBC failed");
  }
  return Status::Ok();
}

void Sha512(std::initializer_list<std::string_view> parts, uint8_t* out) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha512(), nullptr);
  for (std::string_view p : parts) EVP_DigestUpdate(ctx.get(), p.data(), p.size());
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), out, &len);
}

template <size_t N>
std::string_view View(const std::array<uint8_t, N>& a) {
  return {reinterpret_cast<const char*>(a.data()), N};
}

StatusOr<AgilePasswordKey> DeriveAgile(std::string_view password) {
  AgilePasswordKey key;
  EC_RETURN_IF_ERROR(RandomBytes(key.salt.data(), key.salt.size()));
  EC_RETURN_IF_ERROR(RandomBytes(key.package_key.data(), key.package_key.size()));
  std::array<uint8_t, kAgileHashBytes> spun = AgileSpunHash(password, key.salt);
  Wiped<std::array<uint8_t, kAgileHashBytes>> wipe_spun(&spun);

  // The verifier: random bytes, encrypted, and their hash, encrypted, each
  // under its own key from the password; the IV is the encryptor's salt.
  std::array<uint8_t, 16> verifier{};
  EC_RETURN_IF_ERROR(RandomBytes(verifier.data(), verifier.size()));
  std::array<uint8_t, kAgileHashBytes> verifier_hash{};
  Sha512({View(verifier)}, verifier_hash.data());
  std::array<uint8_t, kAgileKeyBytes> k{};
  Wiped<std::array<uint8_t, kAgileKeyBytes>> wipe_k(&k);
  k = AgileBlockKeyFromHash(spun, kVerifierHashInputBlock);
  EC_RETURN_IF_ERROR(AesCbcEncrypt(k.data(), key.salt.data(), verifier.data(), verifier.size(),
                                   key.encrypted_verifier_hash_input.data()));
  k = AgileBlockKeyFromHash(spun, kVerifierHashValueBlock);
  EC_RETURN_IF_ERROR(AesCbcEncrypt(k.data(), key.salt.data(), verifier_hash.data(),
                                   verifier_hash.size(), key.encrypted_verifier_hash_value.data()));
  k = AgileBlockKeyFromHash(spun, kEncryptedKeyValueBlock);
  EC_RETURN_IF_ERROR(AesCbcEncrypt(k.data(), key.salt.data(), key.package_key.data(),
                                   key.package_key.size(), key.encrypted_key_value.data()));
  return key;
}

StatusOr<ZipEntryKey> DeriveZipEntryKey(std::string_view password) {
  ZipEntryKey key;
  EC_RETURN_IF_ERROR(RandomBytes(key.salt.data(), key.salt.size()));
  std::array<uint8_t, 66> derived{};
  Wiped<std::array<uint8_t, 66>> wipe(&derived);
  // WinZip AE-x: PBKDF2-HMAC-SHA1 over the password's bytes (UTF-8, as 7-Zip
  // and pyzipper take it), 1000 iterations, 2 * key length + 2 bytes.
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), key.salt.data(),
                        static_cast<int>(key.salt.size()), kZipPbkdf2Iterations, EVP_sha1(),
                        static_cast<int>(derived.size()), derived.data()) != 1) {
    return Internal("file key: PBKDF2 failed");
  }
  std::memcpy(key.aes_key.data(), derived.data(), 32);
  std::memcpy(key.hmac_key.data(), derived.data() + 32, 32);
  std::memcpy(key.verifier.data(), derived.data() + 64, 2);
  return key;
}

template <size_t N>
void Put(std::string* out, const std::array<uint8_t, N>& a) {
  out->append(View(a));
}

template <size_t N>
void Take(std::string_view* in, std::array<uint8_t, N>* a) {
  std::memcpy(a->data(), in->data(), N);
  in->remove_prefix(N);
}

}  // namespace

std::array<uint8_t, kAgileHashBytes> AgileSpunHash(std::string_view password_utf8,
                                                   const std::array<uint8_t, kAgileSaltBytes>& salt,
                                                   int spin_count) {
  std::string utf16 = Utf16Le(password_utf8);
  std::array<uint8_t, kAgileHashBytes> h{};
  Sha512({View(salt), utf16}, h.data());
  OPENSSL_cleanse(utf16.data(), utf16.size());
  // H(n) = SHA-512(iterator as u32 LE + H(n-1)), one digest context reused.
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  uint8_t buf[4 + kAgileHashBytes];
  for (int i = 0; i < spin_count; ++i) {
    const auto u = static_cast<uint32_t>(i);
    buf[0] = u & 0xff;
    buf[1] = (u >> 8) & 0xff;
    buf[2] = (u >> 16) & 0xff;
    buf[3] = u >> 24;
    std::memcpy(buf + 4, h.data(), h.size());
    unsigned int len = 0;
    EVP_DigestInit_ex(ctx.get(), EVP_sha512(), nullptr);
    EVP_DigestUpdate(ctx.get(), buf, sizeof buf);
    EVP_DigestFinal_ex(ctx.get(), h.data(), &len);
  }
  OPENSSL_cleanse(buf, sizeof buf);
  return h;
}

std::array<uint8_t, kAgileKeyBytes> AgileBlockKeyFromHash(
    const std::array<uint8_t, kAgileHashBytes>& spun_hash,
    const std::array<uint8_t, 8>& block_key) {
  std::array<uint8_t, kAgileHashBytes> h{};
  Sha512({View(spun_hash), View(block_key)}, h.data());
  std::array<uint8_t, kAgileKeyBytes> key{};
  std::memcpy(key.data(), h.data(), key.size());  // keyBits 256 < hashSize 512: cut
  OPENSSL_cleanse(h.data(), h.size());
  return key;
}

std::string SerializeFileKeyMaterial(const FileKeyMaterial& m) {
  std::string out;
  out.reserve(1 + kAgileBytes + 2 + m.zip_keys.size() * kZipKeyBytes);
  out.push_back(static_cast<char>(kKeyMaterialVersion));
  Put(&out, m.agile.salt);
  Put(&out, m.agile.encrypted_verifier_hash_input);
  Put(&out, m.agile.encrypted_verifier_hash_value);
  Put(&out, m.agile.encrypted_key_value);
  Put(&out, m.agile.package_key);
  const auto n = static_cast<uint16_t>(m.zip_keys.size());
  out.push_back(static_cast<char>(n & 0xff));
  out.push_back(static_cast<char>(n >> 8));
  for (const ZipEntryKey& k : m.zip_keys) {
    Put(&out, k.salt);
    Put(&out, k.aes_key);
    Put(&out, k.hmac_key);
    Put(&out, k.verifier);
  }
  return out;
}

StatusOr<FileKeyMaterial> ParseFileKeyMaterial(std::string_view in) {
  if (in.empty()) return InvalidArgument("file key material: empty");
  if (static_cast<uint8_t>(in[0]) != kKeyMaterialVersion) {
    return InvalidArgument("file key material: unknown version " +
                           std::to_string(static_cast<uint8_t>(in[0])));
  }
  in.remove_prefix(1);
  if (in.size() < kAgileBytes + 2) return InvalidArgument("file key material: truncated");
  FileKeyMaterial m;
  Take(&in, &m.agile.salt);
  Take(&in, &m.agile.encrypted_verifier_hash_input);
  Take(&in, &m.agile.encrypted_verifier_hash_value);
  Take(&in, &m.agile.encrypted_key_value);
  Take(&in, &m.agile.package_key);
  const size_t n =
      static_cast<uint8_t>(in[0]) | (static_cast<size_t>(static_cast<uint8_t>(in[1])) << 8);
  in.remove_prefix(2);
  if (n == 0 || n > kMaxZipEntryKeys) {
    return InvalidArgument("file key material: " + std::to_string(n) + " zip keys, expected 1.." +
                           std::to_string(kMaxZipEntryKeys));
  }
  if (in.size() != n * kZipKeyBytes) {
    return InvalidArgument(in.size() < n * kZipKeyBytes ? "file key material: truncated"
                                                        : "file key material: trailing bytes");
  }
  m.zip_keys.resize(n);
  for (ZipEntryKey& k : m.zip_keys) {
    Take(&in, &k.salt);
    Take(&in, &k.aes_key);
    Take(&in, &k.hmac_key);
    Take(&in, &k.verifier);
  }
  return m;
}

}  // namespace encryption

StatusOr<std::string> DeriveFileKeyMaterial(std::string_view password) {
  if (password.empty()) return InvalidArgument("file password: empty");
  if (!utf8::IsValid(password)) return InvalidArgument("file password: not valid UTF-8");
  encryption::FileKeyMaterial m;
  EC_ASSIGN_OR_RETURN(m.agile, encryption::DeriveAgile(password));
  m.zip_keys.reserve(encryption::kMaxZipEntryKeys);
  for (size_t i = 0; i < encryption::kMaxZipEntryKeys; ++i) {
    EC_ASSIGN_OR_RETURN(encryption::ZipEntryKey key, encryption::DeriveZipEntryKey(password));
    m.zip_keys.push_back(key);
  }
  std::string out = encryption::SerializeFileKeyMaterial(m);
  // The copies in `m` are secret too.
  OPENSSL_cleanse(m.agile.package_key.data(), m.agile.package_key.size());
  for (encryption::ZipEntryKey& k : m.zip_keys) {
    OPENSSL_cleanse(k.aes_key.data(), k.aes_key.size());
    OPENSSL_cleanse(k.hmac_key.data(), k.hmac_key.size());
  }
  return out;
}

}  // namespace export_center::render
