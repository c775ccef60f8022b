#include "http/connection_limiter.h"

#include <gtest/gtest.h>

namespace export_center::http {
namespace {

TEST(ConnectionLimiter, CapsPerAddressAndInTotal) {
  ConnectionLimiter limiter(3, 2);
  EXPECT_TRUE(limiter.TryAcquire("10.0.0.1"));
  EXPECT_TRUE(limiter.TryAcquire("10.0.0.1"));
  EXPECT_FALSE(limiter.TryAcquire("10.0.0.1"));
  EXPECT_TRUE(limiter.TryAcquire("10.0.0.2"));
  EXPECT_FALSE(limiter.TryAcquire("10.0.0.3"));  // total
  EXPECT_EQ(limiter.open(), 3);
  limiter.Release("10.0.0.1");
  EXPECT_TRUE(limiter.TryAcquire("10.0.0.3"));
  limiter.Release("unknown");  // ignored
  EXPECT_EQ(limiter.open(), 3);
}

TEST(ConnectionLimiter, Ipv6CountsPerSlash64) {
  EXPECT_EQ(ConnectionLimiter::KeyOf("2001:db8:1:2:aaaa::1"),
            ConnectionLimiter::KeyOf("2001:db8:1:2:bbbb::9"));
  EXPECT_NE(ConnectionLimiter::KeyOf("2001:db8:1:2::1"),
            ConnectionLimiter::KeyOf("2001:db8:1:3::1"));
  EXPECT_EQ(ConnectionLimiter::KeyOf("192.0.2.7"), "192.0.2.7");
  EXPECT_EQ(ConnectionLimiter::KeyOf("::ffff:192.0.2.7"), "::ffff:192.0.2.7");
}

}  // namespace
}  // namespace export_center::http
