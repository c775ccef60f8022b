// The MySQL URL as the store and the datasource read it. The statement
// helpers run against real servers in tests/store/mysql and
// tests/source/sql/sql_template_replica_test.cc.

#include "mysql/mysql_client.h"

#include <gtest/gtest.h>

namespace export_center::mysql {
namespace {

TEST(MysqlUrlTest, ReadsEveryPart) {
  auto url = ParseUrl("mysql://export:s3cret@db.internal:3307/export_center");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->user, "export");
  EXPECT_EQ(url->password, "s3cret");
  EXPECT_EQ(url->host, "db.internal");
  EXPECT_EQ(url->port, 3307u);
  EXPECT_EQ(url->database, "export_center");
  EXPECT_TRUE(url->options.empty());
}

TEST(MysqlUrlTest, DefaultsAndTheMariaDbScheme) {
  auto url = ParseUrl("mariadb://127.0.0.1");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 3306u);
  EXPECT_EQ(url->user, "");
  EXPECT_EQ(url->password, "");
  EXPECT_EQ(url->database, "");
  auto user_only = ParseUrl("mysql://root@localhost/db");
  ASSERT_TRUE(user_only.ok());
  EXPECT_EQ(user_only->user, "root");
  EXPECT_EQ(user_only->password, "");
}

TEST(MysqlUrlTest, DecodesPercentEscapesAndToleratesRawSeparatorsInThePassword) {
  auto escaped = ParseUrl("mysql://us%40er:p%40ss%2Fw%3Ard@h/d%62");
  ASSERT_TRUE(escaped.ok()) << escaped.status().ToString();
  EXPECT_EQ(escaped->user, "us@er");
  EXPECT_EQ(escaped->password, "p@ss/w:rd");
  EXPECT_EQ(escaped->database, "db");
  auto raw = ParseUrl("mysql://u:pa/ss@wo:rd@h:1234/db");
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->user, "u");
  EXPECT_EQ(raw->password, "pa/ss@wo:rd");
  EXPECT_EQ(raw->host, "h");
  EXPECT_EQ(raw->port, 1234u);
  EXPECT_EQ(raw->database, "db");
}

TEST(MysqlUrlTest, Ipv6HostsAndOptions) {
  auto url = ParseUrl("mysql://u@[::1]:3310/db?connect-timeout=3&x=a%20b");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 3310u);
  EXPECT_EQ(url->database, "db");
  ASSERT_EQ(url->options.size(), 2u);
  EXPECT_EQ(url->options[0], (std::pair<std::string, std::string>{"connect-timeout", "3"}));
  EXPECT_EQ(url->options[1], (std::pair<std::string, std::string>{"x", "a b"}));
  auto bare = ParseUrl("mysql://[fe80::2]/db");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->host, "fe80::2");
  EXPECT_EQ(bare->port, 3306u);
}

TEST(MysqlUrlTest, RejectsWhatIsNotAUrlWithoutEchoingThePassword) {
  for (const char* bad :
       {"postgresql://u:hunter2@h/db", "u:hunter2@h/db", "mysql://u:hunter2@/db",
        "mysql://u:hunter2@h:/db", "mysql://u:hunter2@h:0/db", "mysql://u:hunter2@h:65536/db",
        "mysql://u:hunter2@h:12ab/db", "mysql://u:hunter2@[::1/db", "mysql://u:hunter2@[::1]x/db",
        "mysql://u:hunter2@h/db?novalue", "mysql://u:hunter2/db", ""}) {
    auto url = ParseUrl(bad);
    ASSERT_FALSE(url.ok()) << bad;
    EXPECT_EQ(url.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(url.status().message().find("hunter2"), std::string::npos) << url.status().message();
  }
}

TEST(MysqlErrorTest, PrintsCodeAndSqlState) {
  EXPECT_EQ((Error{1213, "40001", "Deadlock found"}).ToString(), "[1213/40001] Deadlock found");
  EXPECT_EQ((Error{2013, "", "Lost connection"}).ToString(), "[2013] Lost connection");
  EXPECT_FALSE(Error{}.failed());
}

}  // namespace
}  // namespace export_center::mysql
