#include "common/file_key_ring.h"

#include <gtest/gtest.h>

#include <string>

namespace export_center {
namespace {

const std::string kKeyA = "an-operator-secret-of-at-least-32-bytes-A";
const std::string kKeyB = "an-operator-secret-of-at-least-32-bytes-B";
const std::string kMaterial = std::string("\x00\x01key material\xff", 16) + std::string(200, 'm');

std::shared_ptr<const FileKeyRing> Ring(const std::string& current,
                                        const std::vector<std::string>& previous = {}) {
  auto ring = FileKeyRing::Create(current, previous);
  EXPECT_TRUE(ring.ok()) << ring.status().ToString();
  return *ring;
}

TEST(FileKeyRing, WrapsAndUnwrapsUnderTheCurrentKey) {
  auto ring = Ring(kKeyA);
  ASSERT_TRUE(ring->CanWrap());
  auto wrapped = ring->Wrap(kMaterial);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().ToString();
  EXPECT_EQ(wrapped->key_id, FileKeyRing::KeyIdOf(kKeyA));
  EXPECT_EQ(wrapped->key_id.size(), 16u);
  EXPECT_EQ(wrapped->sealed.find(kMaterial), std::string::npos);
  auto back = ring->Unwrap(*wrapped);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, kMaterial);
}

// The largest material render/ derives (10 659 bytes: 128 zip entry keys).
TEST(FileKeyRing, WrapsTheLargestKeyMaterial) {
  auto ring = Ring(kKeyA);
  std::string large(10659, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 31);
  auto wrapped = ring->Wrap(large);
  ASSERT_TRUE(wrapped.ok());
  auto back = ring->Unwrap(*wrapped);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, large);
}

TEST(FileKeyRing, EachWrapHasItsOwnNonce) {
  auto ring = Ring(kKeyA);
  auto one = ring->Wrap(kMaterial), two = ring->Wrap(kMaterial);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_NE(one->sealed, two->sealed);
}

TEST(FileKeyRing, KeyIdsDifferPerKeyAndRevealNoKey) {
  EXPECT_NE(FileKeyRing::KeyIdOf(kKeyA), FileKeyRing::KeyIdOf(kKeyB));
  EXPECT_EQ(FileKeyRing::KeyIdOf(kKeyA), FileKeyRing::KeyIdOf(kKeyA));
  EXPECT_EQ(FileKeyRing::KeyIdOf(kKeyA).find("operator"), std::string::npos);
}

TEST(FileKeyRing, RotationNewKeyWrapsPreviousKeysStillUnwrap) {
  auto old_ring = Ring(kKeyA);
  auto wrapped_before = old_ring->Wrap(kMaterial);
  ASSERT_TRUE(wrapped_before.ok());

  auto rotated = Ring(kKeyB, {kKeyA});
  auto wrapped_after = rotated->Wrap(kMaterial);
  ASSERT_TRUE(wrapped_after.ok());
  EXPECT_EQ(wrapped_after->key_id, FileKeyRing::KeyIdOf(kKeyB));
  auto before = rotated->Unwrap(*wrapped_before);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(*before, kMaterial);

  // The old key rotated away: a clear NotFound naming the key id, not the key.
  auto without_a = Ring(kKeyB);
  auto gone = without_a->Unwrap(*wrapped_before);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find(wrapped_before->key_id), std::string::npos);
  EXPECT_EQ(gone.status().message().find(kKeyA), std::string::npos);
}

TEST(FileKeyRing, AlteredOrMislabelledMaterialDoesNotAuthenticate) {
  auto ring = Ring(kKeyA, {kKeyB});
  auto wrapped = ring->Wrap(kMaterial);
  ASSERT_TRUE(wrapped.ok());
  WrappedFileKey altered = *wrapped;
  altered.sealed[20] = altered.sealed[20] == 'A' ? 'B' : 'A';
  EXPECT_EQ(ring->Unwrap(altered).status().code(), StatusCode::kInvalidArgument);
  // The key id is bound as associated data: relabelled, it fails too.
  WrappedFileKey relabelled = *wrapped;
  relabelled.key_id = FileKeyRing::KeyIdOf(kKeyB);
  EXPECT_EQ(ring->Unwrap(relabelled).status().code(), StatusCode::kInvalidArgument);
  WrappedFileKey garbage{wrapped->key_id, "not base64!"};
  EXPECT_EQ(ring->Unwrap(garbage).status().code(), StatusCode::kInvalidArgument);
  WrappedFileKey short_one{wrapped->key_id, "AAAA"};
  EXPECT_EQ(ring->Unwrap(short_one).status().code(), StatusCode::kInvalidArgument);
}

TEST(FileKeyRing, RefusesShortKeysAndWrapsNothingWithoutACurrentKey) {
  auto short_key = FileKeyRing::Create(std::string(31, 'k'), {});
  ASSERT_FALSE(short_key.ok());
  EXPECT_EQ(short_key.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(short_key.status().message().find("kkkk"), std::string::npos);
  EXPECT_FALSE(FileKeyRing::Create(kKeyA, {"too-short"}).ok());

  auto unwrap_only = Ring("", {kKeyA});
  EXPECT_FALSE(unwrap_only->CanWrap());
  EXPECT_EQ(unwrap_only->Wrap(kMaterial).status().code(), StatusCode::kInvalidArgument);
  auto wrapped = Ring(kKeyA)->Wrap(kMaterial);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_TRUE(unwrap_only->Unwrap(*wrapped).ok());
  EXPECT_FALSE(Ring(kKeyA)->Wrap("").ok());
}

}  // namespace
}  // namespace export_center
