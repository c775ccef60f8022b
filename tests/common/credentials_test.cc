#include "common/credentials.h"

#include <gtest/gtest.h>

namespace export_center::credentials {
namespace {

TEST(Credentials, MasksTheUrlPasswordAndKeepsTheUser) {
  EXPECT_EQ(Mask("postgresql://export:s3cr%40t@db:5432/center"),
            "postgresql://export:***@db:5432/center");
  // A password may hold '@': the last '@' of the authority ends the user info.
  EXPECT_EQ(Mask("mysql://u:p@ss@db/x"), "mysql://u:***@db/x");
  EXPECT_EQ(Mask("postgresql://export@db/center"), "postgresql://export@db/center");
  EXPECT_EQ(Mask("https://db:5432/x@y"), "https://db:5432/x@y");  // '@' in the path
}

TEST(Credentials, MasksLibpqKeywordValuesBareAndQuoted) {
  EXPECT_EQ(Mask("host=db port=5432 password=hunter2 dbname=center"),
            "host=db port=5432 password=*** dbname=center");
  EXPECT_EQ(Mask("host=db password = 'a b\\' c' user=x"), "host=db password = '***' user=x");
  EXPECT_EQ(Mask("PASSWORD=Hunter2"), "PASSWORD=***");
  EXPECT_EQ(Mask("sslpassword=k1 pwd=k2;Server=db"), "sslpassword=*** pwd=***;Server=db");
}

TEST(Credentials, MasksQueryParameters) {
  EXPECT_EQ(Mask("mysql://db/center?password=hunter2&ssl-mode=REQUIRED"),
            "mysql://db/center?password=***&ssl-mode=REQUIRED");
  EXPECT_EQ(Mask("https://hook/x?a=1&access_token=abc#f"), "https://hook/x?a=1&access_token=***#f");
}

TEST(Credentials, LeavesKeysThatOnlyEndLikeASecretAlone) {
  EXPECT_EQ(Mask("mypassword=x notoken=y"), "mypassword=x notoken=y");
  EXPECT_EQ(Mask("password"), "password");
  EXPECT_EQ(Mask("password="), "password=");
}

TEST(Credentials, FindReturnsEachSecretUnquoted) {
  std::vector<std::string> found = Find("postgresql://u:pw1@db/x?token=t2 password='p 3'");
  EXPECT_EQ(found, (std::vector<std::string>{"pw1", "t2", "p 3"}));
  EXPECT_TRUE(Find("host=db user=export").empty());
}

TEST(Credentials, AnyInputIsSafe) {
  for (std::string text : {std::string("password='unterminated"), std::string("://@:"),
                           std::string("a://:@"), std::string(3, '\0') + "pwd=\x01"}) {
    std::string masked = Mask(text);
    EXPECT_LE(masked.size(), text.size() + kMask.size() * 2);
  }
  EXPECT_EQ(Mask("password='unterminated"), "password='***");
}

}  // namespace
}  // namespace export_center::credentials
