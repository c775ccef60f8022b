// The seam's helpers (http/http_client.h): the query encoding every caller
// used before the seam — cpp-httplib's — byte for byte, and URL splitting.

#include "http/http_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>

namespace export_center::http {
namespace {

TEST(EncodeQueryParam, KeepsTheSetCppHttplibKeepsForEveryByte) {
  for (int c = 0; c < 256; ++c) {
    const std::string one(1, static_cast<char>(c));
    EXPECT_EQ(EncodeQueryParam(one), httplib::detail::encode_query_param(one)) << "byte " << c;
  }
  EXPECT_EQ(EncodeQueryParam("orders.list"), "orders.list");
  EXPECT_EQ(EncodeQueryParam("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
}

TEST(SplitUrl, SplitsOriginAndPathWithItsQuery) {
  EXPECT_EQ(SplitUrl("https://hooks.example:8443/a/b?c=1"),
            std::make_pair(std::string("https://hooks.example:8443"), std::string("/a/b?c=1")));
  EXPECT_EQ(SplitUrl("http://127.0.0.1:9"),
            std::make_pair(std::string("http://127.0.0.1:9"), std::string("/")));
  EXPECT_EQ(SplitUrl("no-scheme/x"), std::make_pair(std::string("no-scheme/x"), std::string("/")));
}

}  // namespace
}  // namespace export_center::http
