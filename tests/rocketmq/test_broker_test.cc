// The throwaway broker of tests/support/rocketmq_server.h itself: it starts,
// listens where it says, and Kill()/Restart() take the broker down and up
// while the NameServer stays.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "tests/support/rocketmq_server.h"
#include "tests/support/server_process.h"

namespace export_center::testing {
namespace {

bool Accepts(const std::string& addr) {
  const int port = std::stoi(addr.substr(addr.find(':') + 1));
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  close(fd);
  return ok;
}

TEST(RocketMqServer, StartsKillsAndRestartsTheBroker) {
  auto server = RocketMqServer::Start();
  if (!server.ok() && server.status().code() == StatusCode::kUnavailable &&
      !RealServersRequired()) {
    GTEST_SKIP() << server.status().ToString();
  }
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  RocketMqServer& rmq = **server;
  EXPECT_EQ(rmq.namesrv_addr().rfind("127.0.0.1:", 0), 0u) << rmq.namesrv_addr();
  EXPECT_TRUE(Accepts(rmq.namesrv_addr()));
  EXPECT_TRUE(Accepts(rmq.broker_addr()));

  ASSERT_TRUE(rmq.Kill().ok());
  EXPECT_FALSE(Accepts(rmq.broker_addr()));
  EXPECT_TRUE(Accepts(rmq.namesrv_addr()));

  ASSERT_TRUE(rmq.Restart().ok());
  EXPECT_TRUE(Accepts(rmq.broker_addr()));
}

}  // namespace
}  // namespace export_center::testing
