#include "tests/support/server_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

namespace export_center::testing {

StatusOr<int> FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Internal("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return Internal("binding port 0 failed");
  }
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::string TailOfFile(const std::string& path, size_t bytes) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

void StopAndReap(pid_t pid, int signal) {
  if (pid <= 0) return;
  kill(pid, signal);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  int wstatus = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &wstatus, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &wstatus, 0);
}

}  // namespace export_center::testing
