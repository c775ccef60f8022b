#pragma once
// RawConnection: a plain blocking TCP connection for HTTP tests that must
// misbehave like real clients do — stay silent, send half a request, stop
// reading — and observe how the server ends the connection.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace export_center::testing {

class RawConnection {
 public:
  // Connects to 127.0.0.1:port, from `source_ip` when given (any 127.x.y.z
  // works on Linux, so tests can play several client addresses). Null when
  // the connection cannot be made.
  static std::unique_ptr<RawConnection> Open(int port, const std::string& source_ip = "",
                                             int receive_buffer_bytes = 0);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool Send(std::string_view bytes);
  // Reads one response (header and a Content-Length body). "" on timeout or
  // when the server closes first.
  std::string ReadResponse(std::chrono::milliseconds timeout);

  enum class End { kEof, kReset, kTimeout };
  // Reads until the server closes the connection; what arrived before the
  // end is appended to *seen.
  End WaitForClose(std::chrono::milliseconds timeout, std::string* seen = nullptr);

 private:
  explicit RawConnection(int fd) : fd_(fd) {}
  // Waits for readable data up to `deadline`; false on timeout.
  bool WaitReadable(std::chrono::steady_clock::time_point deadline);

  int fd_;
  std::string pending_;  // bytes read past the last response
};

// The body of a raw response ("" when there is none).
std::string BodyOf(const std::string& response);
// The status code of a raw response (0 when unparsable).
int StatusOf(const std::string& response);

}  // namespace export_center::testing
