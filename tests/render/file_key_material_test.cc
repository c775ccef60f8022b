#include "render/encryption/file_key_material.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <set>
#include <string>

#include "render/file_encryption.h"

namespace export_center::render::encryption {
namespace {

template <size_t N>
std::string Bytes(const std::array<uint8_t, N>& a) {
  return std::string(reinterpret_cast<const char*>(a.data()), N);
}

// AES-256-CBC decryption, no padding: the reader's side of the verifier.
std::string AesCbcDecrypt(const std::array<uint8_t, 32>& key, const std::array<uint8_t, 16>& iv,
                          const std::string& in) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::string out(in.size(), '\0');
  int len = 0;
  EVP_DecryptInit_ex(ctx, EVP_aes_256_cbc(), nullptr, key.data(), iv.data());
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EVP_DecryptUpdate(ctx, reinterpret_cast<unsigned char*>(out.data()), &len,
                    reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

std::string Sha512Of(const std::string& in) {
  unsigned char out[64];
  unsigned int len = 0;
  EVP_Digest(in.data(), in.size(), out, &len, EVP_sha512(), nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

// What a reader does with the password (MS-OFFCRYPTO 2.3.4.13): the verifier
// decrypts to input and hash(input); the key value decrypts to the package key.
TEST(FileKeyMaterial, AgileVerifierAndPackageKeyOpenWithThePassword) {
  const std::string password = "Pässwörd-\xF0\x9F\x94\x91";  // non-ASCII and a surrogate pair
  auto bytes = DeriveFileKeyMaterial(password);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto m = ParseFileKeyMaterial(*bytes);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(SerializeFileKeyMaterial(*m), *bytes);

  const auto spun = AgileSpunHash(password, m->agile.salt);
  const auto input = AesCbcDecrypt(AgileBlockKeyFromHash(spun, kVerifierHashInputBlock),
                                   m->agile.salt, Bytes(m->agile.encrypted_verifier_hash_input));
  const auto hash = AesCbcDecrypt(AgileBlockKeyFromHash(spun, kVerifierHashValueBlock),
                                  m->agile.salt, Bytes(m->agile.encrypted_verifier_hash_value));
  EXPECT_EQ(hash, Sha512Of(input));
  EXPECT_EQ(AesCbcDecrypt(AgileBlockKeyFromHash(spun, kEncryptedKeyValueBlock), m->agile.salt,
                          Bytes(m->agile.encrypted_key_value)),
            Bytes(m->agile.package_key));

  // Another password does not verify.
  const auto wrong = AgileSpunHash("password", m->agile.salt);
  const auto wrong_input =
      AesCbcDecrypt(AgileBlockKeyFromHash(wrong, kVerifierHashInputBlock), m->agile.salt,
                    Bytes(m->agile.encrypted_verifier_hash_input));
  const auto wrong_hash =
      AesCbcDecrypt(AgileBlockKeyFromHash(wrong, kVerifierHashValueBlock), m->agile.salt,
                    Bytes(m->agile.encrypted_verifier_hash_value));
  EXPECT_NE(wrong_hash, Sha512Of(wrong_input));
}

// The spun hash follows the spec's formula: checked against a direct
// computation with a small spin count.
TEST(FileKeyMaterial, SpunHashIsTheSpecsFormula) {
  std::array<uint8_t, 16> salt{};
  for (size_t i = 0; i < salt.size(); ++i) salt[i] = static_cast<uint8_t>(i * 7);
  std::string h = Sha512Of(Bytes(salt) + std::string("a\0\xE9\0", 4));  // "aé" in UTF-16LE
  for (uint32_t i = 0; i < 3; ++i) {
    std::string it(4, '\0');
    it[0] = static_cast<char>(i);
    h = Sha512Of(it + h);
  }
  EXPECT_EQ(Bytes(AgileSpunHash("a\xC3\xA9", salt, 3)), h);
}

// Every zip entry key is PBKDF2-HMAC-SHA1(password, its own salt, 1000) and
// no two entries share a salt (an AE-2 key stream must never repeat).
TEST(FileKeyMaterial, ZipEntryKeysArePbkdf2WithDistinctSalts) {
  const std::string password = "correct horse";
  auto m = ParseFileKeyMaterial(*DeriveFileKeyMaterial(password));
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->zip_keys.size(), kMaxZipEntryKeys);
  std::set<std::string> salts;
  for (const ZipEntryKey& k : m->zip_keys) {
    salts.insert(Bytes(k.salt));
    unsigned char derived[66];
    ASSERT_EQ(PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), k.salt.data(),
                                16, 1000, EVP_sha1(), 66, derived),
              1);
    EXPECT_EQ(Bytes(k.aes_key), std::string(reinterpret_cast<char*>(derived), 32));
    EXPECT_EQ(Bytes(k.hmac_key), std::string(reinterpret_cast<char*>(derived) + 32, 32));
    EXPECT_EQ(Bytes(k.verifier), std::string(reinterpret_cast<char*>(derived) + 64, 2));
  }
  EXPECT_EQ(salts.size(), kMaxZipEntryKeys);
}

TEST(FileKeyMaterial, TwoDerivationsShareNothing) {
  auto a = ParseFileKeyMaterial(*DeriveFileKeyMaterial("same"));
  auto b = ParseFileKeyMaterial(*DeriveFileKeyMaterial("same"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(Bytes(a->agile.salt), Bytes(b->agile.salt));
  EXPECT_NE(Bytes(a->agile.package_key), Bytes(b->agile.package_key));
  EXPECT_NE(Bytes(a->zip_keys[0].salt), Bytes(b->zip_keys[0].salt));
}

TEST(FileKeyMaterial, RefusesEmptyOrInvalidPasswords) {
  EXPECT_EQ(DeriveFileKeyMaterial("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DeriveFileKeyMaterial("ab\xC3").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DeriveFileKeyMaterial("\xED\xA0\x80").status().code(), StatusCode::kInvalidArgument);
}

TEST(FileKeyMaterial, ParserRefusesWhatIsNotAWholeVersion1Material) {
  const std::string good = *DeriveFileKeyMaterial("pw");
  EXPECT_TRUE(ParseFileKeyMaterial(good).ok());
  EXPECT_LE(good.size(), 10659u);
  EXPECT_FALSE(ParseFileKeyMaterial("").ok());
  std::string v2 = good;
  v2[0] = 2;
  EXPECT_NE(ParseFileKeyMaterial(v2).status().message().find("version"), std::string::npos);
  EXPECT_FALSE(ParseFileKeyMaterial(good.substr(0, good.size() - 1)).ok());
  EXPECT_FALSE(ParseFileKeyMaterial(good.substr(0, 100)).ok());
  EXPECT_FALSE(ParseFileKeyMaterial(good + "x").ok());
  std::string zero = good.substr(0, 1 + 160) + std::string(2, '\0');
  EXPECT_FALSE(ParseFileKeyMaterial(zero).ok());
  std::string too_many = good;
  too_many[161] = static_cast<char>(0xff);
  too_many[162] = static_cast<char>(0xff);
  EXPECT_FALSE(ParseFileKeyMaterial(too_many).ok());
  // One key is a valid material.
  std::string one = good.substr(0, 161) + std::string("\x01\x00", 2) + good.substr(163, 82);
  auto parsed = ParseFileKeyMaterial(one);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->zip_keys.size(), 1u);
}

}  // namespace
}  // namespace export_center::render::encryption
