#include "api/strict_json.h"

#include <gtest/gtest.h>

namespace export_center::api {
namespace {

TEST(StrictJson, ContentType) {
  EXPECT_TRUE(CheckJsonContentType("application/json").ok());
  EXPECT_TRUE(CheckJsonContentType("Application/JSON; charset=UTF-8").ok());
  EXPECT_TRUE(CheckJsonContentType("application/json;charset=\"utf-8\"").ok());
  EXPECT_FALSE(CheckJsonContentType("").ok());
  EXPECT_FALSE(CheckJsonContentType("text/plain").ok());
  EXPECT_FALSE(CheckJsonContentType("application/jsonp").ok());
  EXPECT_FALSE(CheckJsonContentType("application/x-www-form-urlencoded").ok());
  EXPECT_FALSE(CheckJsonContentType("application/json; charset=latin1").ok());
}

}  // namespace
}  // namespace export_center::api
