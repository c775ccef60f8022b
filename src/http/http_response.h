#pragma once
// HttpResponse: what a handler answers — a status, headers and either a body
// held in memory or a BodySource the server pulls chunk by chunk.
//
// Streaming (downloads) keeps memory bounded: the server asks the source for
// the next chunk only after the previous one was written to the socket, so a
// slow client costs one chunk buffer, not a file. A LiveSource (Server-Sent
// Events) is the open-ended variant: unknown length, and "nothing yet" costs
// no thread.

#include <cstdint>
#include <functional>
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

// An open-ended body of unknown length, sent with chunked transfer coding,
// that may have nothing to send for a while (Server-Sent Events).
//
// Unlike BodySource it never blocks and needs no worker: the server calls
// Poll on its I/O thread whenever the previous chunk was written; when Poll
// gives nothing, the connection waits — holding no thread — until the source
// calls the waker the server installed with SetWaker. Bytes that arrive while
// a chunk is being written are picked up by the next Poll, so no wake is lost.
class LiveSource {
 public:
  enum class PollResult {
    kReady,  // *out holds what is ready now; it may be empty (then: wait for the waker)
    kEnd,    // the body is over: the server ends it and closes the connection
  };
  virtual ~LiveSource() = default;
  // Non-blocking. Appends at most `max_bytes` to *out (which arrives empty).
  virtual PollResult Poll(size_t max_bytes, std::string* out) = 0;
  // Installed once before the first Poll. The source may call `wake` from any
  // thread, any number of times, until Close returns.
  virtual void SetWaker(std::function<void()> wake) = 0;
  // The connection is gone (client left, deadline, server stop): the waker
  // must not be called after this returns. Idempotent.
  virtual void Close() = 0;
};

struct HttpResponse {
  int status = 200;
  HeaderMap headers;
  std::string body;                    // used when `stream` is null
  std::shared_ptr<BodySource> stream;  // the body, when set
  uint64_t stream_length = 0;          // bytes `stream` will give (Content-Length)
  std::shared_ptr<LiveSource> live;    // an open-ended body, when set (wins over both)

  const std::string& Header(std::string_view name) const { return headers.Get(name); }
  void SetHeader(std::string name, std::string value) {
    headers.Set(std::move(name), std::move(value));
  }
  // An in-memory body with its Content-Type.
  void SetContent(std::string content, std::string_view content_type);
  // A streamed body of exactly `length` bytes with its Content-Type.
  void SetStream(std::shared_ptr<BodySource> source, uint64_t length,
                 std::string_view content_type);
  // An open-ended body (chunked, unknown length) with its Content-Type.
  void SetLive(std::shared_ptr<LiveSource> source, std::string_view content_type);
};

}  // namespace export_center::http
