#pragma once
// HttpResponse: what a handler answers — a status, headers and either a body
// held in memory or a BodySource the server pulls chunk by chunk.
//
// Streaming (downloads, later Server-Sent Events) keeps memory bounded: the
// server asks the source for the next chunk only after the previous one was
// written to the socket, so a slow client costs one chunk buffer, not a file.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "http/http_request.h"

namespace export_center::http {

// A response body produced piecewise.
//
// Next() is called on a worker thread (it may block on a file or a network
// read), one call at a time, and only after the previous chunk was written.
// It appends at most `max_bytes` to *out (which arrives empty). An error, or
// no bytes before the announced length was sent, ends the response early by
// closing the connection: the client sees a short body against Content-Length.
class BodySource {
 public:
  virtual ~BodySource() = default;
  virtual Status Next(size_t max_bytes, std::string* out) = 0;
};

struct HttpResponse {
  int status = 200;
  HeaderMap headers;
  std::string body;                    // used when `stream` is null
  std::shared_ptr<BodySource> stream;  // the body, when set
  uint64_t stream_length = 0;          // bytes `stream` will give (Content-Length)

  const std::string& Header(std::string_view name) const { return headers.Get(name); }
  void SetHeader(std::string name, std::string value) {
    headers.Set(std::move(name), std::move(value));
  }
  // An in-memory body with its Content-Type.
  void SetContent(std::string content, std::string_view content_type);
  // A streamed body of exactly `length` bytes with its Content-Type.
  void SetStream(std::shared_ptr<BodySource> source, uint64_t length,
                 std::string_view content_type);
};

}  // namespace export_center::http
