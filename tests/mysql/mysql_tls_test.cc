// TLS of MySQL connections (ConnectOptions::tls, docs/configuration.md#database-tls)
// against one throwaway MariaDB started with a CA and a server certificate
// made at test time (MariaDbServer::StartWithTls). mysql::Connect is the one
// place both users set TLS up; the last two tests check that the task
// store's database and the MySQL datasource hand their options to it.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mysql/mysql_client.h"
#include "source/sql/datasource/mysql/mysql_datasource.h"
#include "store/mysql/mysql_database.h"
#include "tests/support/mariadb_server.h"
#include "tests/support/once_per_kind.h"

namespace export_center::mysql {
namespace {

// Accounts created once on the server: one that must use TLS, one that must
// present a client certificate signed by the server's CA.
constexpr const char* kTlsOnlyUser = "tls_only";
constexpr const char* kX509User = "x509_only";

class MysqlTlsTest : public ::testing::Test {
 protected:
  static testing::MariaDbServer* Server(std::string* why) {
    static testing::OncePerKind<testing::MariaDbServer> servers;
    return servers.Get(
        "mariadb-tls",
        []() -> StatusOr<std::unique_ptr<testing::MariaDbServer>> {
          EC_ASSIGN_OR_RETURN(auto server, testing::MariaDbServer::StartWithTls());
          EC_RETURN_IF_ERROR(server->Exec(
              std::string("CREATE USER '") + kTlsOnlyUser +
              "'@'%' IDENTIFIED BY 'pw' REQUIRE SSL; GRANT ALL ON export_center.* TO '" +
              kTlsOnlyUser + "'@'%'; CREATE USER '" + kX509User +
              "'@'%' IDENTIFIED BY 'pw' REQUIRE X509; GRANT ALL ON export_center.* TO '" +
              kX509User + "'@'%';"));
          return server;
        },
        why);
  }

  void SetUp() override {
    std::string why;
    server_ = Server(&why);
    EC_REQUIRE_REAL_SERVER(server_, "MariaDB with TLS", why);
  }

  std::string UrlAs(const std::string& user) const {
    return "mysql://" + user + ":pw@127.0.0.1:" + std::to_string(server_->port()) +
           "/export_center";
  }
  Url ParsedAs(const std::string& user) const { return ParseUrl(UrlAs(user)).value(); }
  Url RootUrl() const { return ParseUrl(server_->url()).value(); }

  ConnectOptions With(TlsMode mode, const std::string& ca = "") const {
    ConnectOptions options;
    options.tls.mode = mode;
    options.tls.ca_file = ca;
    return options;
  }

  // The server's view of the session: SHOW STATUS LIKE 'Ssl_cipher'.
  static std::string ServerSideCipher(MYSQL* conn) {
    Answer answer;
    Error e = Query(conn, "SHOW STATUS LIKE 'Ssl_cipher'", &answer);
    EXPECT_FALSE(e.failed()) << e.ToString();
    if (answer.rows.size() != 1 || !answer.rows[0][1]) return "<no row>";
    return *answer.rows[0][1];
  }

  testing::MariaDbServer* server_ = nullptr;
};

TEST_F(MysqlTlsTest, RequiredConnectsOverTls) {
  auto [conn, error] = Connect(RootUrl(), With(TlsMode::kRequired));
  ASSERT_TRUE(conn) << error.ToString();
  EXPECT_NE(ServerSideCipher(conn.get()), "");
  EXPECT_EQ(TlsCipher(conn.get()), ServerSideCipher(conn.get()));
}

TEST_F(MysqlTlsTest, PreferredUsesTlsWhenTheServerOffersIt) {
  auto [conn, error] = Connect(RootUrl(), With(TlsMode::kPreferred));
  ASSERT_TRUE(conn) << error.ToString();
  EXPECT_NE(ServerSideCipher(conn.get()), "");
}

TEST_F(MysqlTlsTest, DisabledConnectsWithoutTls) {
  auto [conn, error] = Connect(RootUrl(), With(TlsMode::kDisabled));
  ASSERT_TRUE(conn) << error.ToString();
  EXPECT_EQ(ServerSideCipher(conn.get()), "");
  EXPECT_EQ(TlsCipher(conn.get()), "");
}

TEST_F(MysqlTlsTest, VerifyCaConnectsWithTheServersCa) {
  for (TlsMode mode : {TlsMode::kVerifyCa, TlsMode::kVerifyIdentity}) {
    auto [conn, error] = Connect(RootUrl(), With(mode, server_->tls().ca));
    ASSERT_TRUE(conn) << TlsModeName(mode) << ": " << error.ToString();
    EXPECT_NE(ServerSideCipher(conn.get()), "") << TlsModeName(mode);
  }
}

TEST_F(MysqlTlsTest, VerifyCaWithAnotherCaFailsWithACertificateError) {
  for (TlsMode mode : {TlsMode::kVerifyCa, TlsMode::kVerifyIdentity}) {
    auto [conn, error] = Connect(RootUrl(), With(mode, server_->tls().other_ca));
    EXPECT_FALSE(conn) << TlsModeName(mode) << " trusted a certificate its CA did not sign";
    EXPECT_EQ(error.code, kClientSslConnectionError) << error.ToString();
    EXPECT_NE(error.message.find("certificate"), std::string::npos) << error.ToString();
  }
  // required does not check the certificate, whatever CA is configured.
  auto [conn, error] = Connect(RootUrl(), With(TlsMode::kRequired, server_->tls().other_ca));
  EXPECT_TRUE(conn) << error.ToString();
}

TEST_F(MysqlTlsTest, ARequireSslAccountRefusesAConnectionWithoutTls) {
  auto [plain, refused] = Connect(ParsedAs(kTlsOnlyUser), With(TlsMode::kDisabled));
  EXPECT_FALSE(plain);
  EXPECT_EQ(refused.code, 1045u) << refused.ToString();  // ER_ACCESS_DENIED_ERROR
  auto [tls, error] = Connect(ParsedAs(kTlsOnlyUser), With(TlsMode::kRequired));
  ASSERT_TRUE(tls) << error.ToString();
  EXPECT_NE(ServerSideCipher(tls.get()), "");
}

TEST_F(MysqlTlsTest, AClientCertificateServesARequireX509Account) {
  auto [without, refused] = Connect(ParsedAs(kX509User), With(TlsMode::kRequired));
  EXPECT_FALSE(without) << "no client certificate, yet accepted";
  ConnectOptions options = With(TlsMode::kVerifyCa, server_->tls().ca);
  options.tls.cert_file = server_->tls().client_cert;
  options.tls.key_file = server_->tls().client_key;
  auto [conn, error] = Connect(ParsedAs(kX509User), options);
  ASSERT_TRUE(conn) << error.ToString();
  EXPECT_NE(ServerSideCipher(conn.get()), "");
}

// A server without TLS: libmariadb's MYSQL_OPT_SSL_ENFORCE alone would
// connect unencrypted, so required and the verify modes refuse it after the
// connect, and preferred takes the unencrypted connection.
TEST_F(MysqlTlsTest, AServerWithoutTlsIsRefusedWhereTlsIsRequired) {
  static testing::OncePerKind<testing::MariaDbServer> plain_servers;
  std::string why;
  testing::MariaDbServer* plain = plain_servers.Get(
      "mariadb", [] { return testing::MariaDbServer::Start(); }, &why);
  EC_REQUIRE_REAL_SERVER(plain, "MariaDB", why);
  const Url url = ParseUrl(plain->url()).value();
  for (TlsMode mode : {TlsMode::kRequired, TlsMode::kVerifyCa, TlsMode::kVerifyIdentity}) {
    auto [conn, error] = Connect(url, With(mode, server_->tls().ca));
    EXPECT_FALSE(conn) << TlsModeName(mode) << " connected without TLS";
    EXPECT_EQ(error.code, kClientSslConnectionError) << error.ToString();
    // Ours ("TLS is required (ssl-mode required) but the server does not offer
    // it"), or libmariadb's own with VERIFY_SERVER_CERT ("SSL is required, ...").
    EXPECT_NE(error.message.find(" is required"), std::string::npos) << error.ToString();
  }
  auto [conn, error] = Connect(url, With(TlsMode::kPreferred));
  ASSERT_TRUE(conn) << error.ToString();
  EXPECT_EQ(ServerSideCipher(conn.get()), "");
}

// The task store's connections (its start-up probe and its pool) use the
// options: a REQUIRE SSL account serves it with verify-ca, and the wrong CA
// or no TLS keeps it from opening.
TEST_F(MysqlTlsTest, TheTaskStoreDatabaseConnectsAsItsTlsOptionsSay) {
  store::MysqlDatabaseOptions options;
  options.pool_size = 1;
  options.tls.mode = TlsMode::kVerifyCa;
  options.tls.ca_file = server_->tls().ca;
  auto db = store::OpenMysqlDatabase(UrlAs(kTlsOnlyUser), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();

  options.tls.ca_file = server_->tls().other_ca;
  auto wrong_ca = store::OpenMysqlDatabase(UrlAs(kTlsOnlyUser), options);
  ASSERT_FALSE(wrong_ca.ok());
  EXPECT_EQ(wrong_ca.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(wrong_ca.status().message().find("certificate"), std::string::npos)
      << wrong_ca.status().ToString();

  options.tls = {};
  options.tls.mode = TlsMode::kDisabled;
  auto plain = store::OpenMysqlDatabase(UrlAs(kTlsOnlyUser), options);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("Access denied"), std::string::npos)
      << plain.status().ToString();
}

TEST_F(MysqlTlsTest, TheMysqlDatasourceConnectsAsItsTlsOptionsSay) {
  ClientTlsOptions tls;
  tls.mode = TlsMode::kVerifyIdentity;
  tls.ca_file = server_->tls().ca;
  auto ds = source::NewMysqlDatasource(UrlAs(kTlsOnlyUser), {}, tls);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto rows = (*ds)->Query("SELECT 1", {}, "");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();

  tls.mode = TlsMode::kDisabled;
  tls.ca_file.clear();
  auto plain = source::NewMysqlDatasource(UrlAs(kTlsOnlyUser), {}, tls);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  auto refused = (*plain)->Query("SELECT 1", {}, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();
}

}  // namespace
}  // namespace export_center::mysql
