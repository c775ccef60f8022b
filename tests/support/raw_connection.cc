#include "tests/support/raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace export_center::testing {

std::unique_ptr<RawConnection> RawConnection::Open(int port, const std::string& source_ip,
                                                   int receive_buffer_bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return nullptr;
  if (receive_buffer_bytes > 0) {
    // Before connect, so the advertised window is small from the start.
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes, sizeof receive_buffer_bytes);
  }
  if (!source_ip.empty()) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, source_ip.c_str(), &local.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      ::close(fd);
      return nullptr;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return nullptr;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return std::unique_ptr<RawConnection>(new RawConnection(fd));
}

RawConnection::~RawConnection() { ::close(fd_); }

bool RawConnection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawConnection::WaitReadable(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(left.count())) > 0;
}

std::string RawConnection::ReadResponse(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string& in = pending_;
  size_t header_end = std::string::npos;
  size_t need = std::string::npos;
  char buf[65536];
  while (true) {
    if (header_end == std::string::npos) {
      header_end = in.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        size_t length = 0;
        size_t at = in.find("\r\nContent-Length: ");
        if (at != std::string::npos && at < header_end) {
          length = std::strtoull(in.c_str() + at + 18, nullptr, 10);
        }
        need = header_end + 4 + length;
      }
    }
    if (need != std::string::npos && in.size() >= need) {
      std::string out = in.substr(0, need);
      in.erase(0, need);
      return out;
    }
    if (!WaitReadable(deadline)) return "";
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return "";
    in.append(buf, static_cast<size_t>(n));
  }
}

RawConnection::End RawConnection::WaitForClose(std::chrono::milliseconds timeout,
                                               std::string* seen) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  if (seen != nullptr) seen->append(pending_);
  pending_.clear();
  char buf[65536];
  while (true) {
    if (!WaitReadable(deadline)) return End::kTimeout;
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return End::kEof;
    if (n < 0) return errno == ECONNRESET ? End::kReset : End::kEof;
    if (seen != nullptr) seen->append(buf, static_cast<size_t>(n));
  }
}

std::string BodyOf(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

int StatusOf(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.c_str() + 9);
}

}  // namespace export_center::testing
