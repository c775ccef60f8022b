#pragma once
// ScriptedHttpClientFactory: an http::HttpClientFactory whose clients answer
// from a script instead of the network, and record every client opened and
// every request sent, so a caller's unit test needs no server and can check
// what went out. An answer is judged as the real client judges one read from
// the wire: a body past the request's cap is kTooLarge (its status kept), a
// request that does not read the body gets the status and headers only.
// Thread-safe (the notifier calls from its own thread).

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "http/http_client.h"

namespace export_center::fakes {

// One scripted answer: an HTTP answer, or (error set) no answer at all.
struct ScriptedAnswer {
  ScriptedAnswer() = default;
  ScriptedAnswer(int status, std::string body) : status(status), body(std::move(body)) {}

  int status = 200;
  std::string body;
  http::HeaderMap headers;
  http::ClientError error = http::ClientError::kNone;  // set: kNotSent
  std::string error_text = "Connection";               // with error
  bool too_slow = false;                               // kTooSlow (the deadline passed)
};

// One request as a client sent it, with the options of that client.
struct RecordedCall {
  http::HttpClientOptions client;
  http::ClientRequest request;
};

class ScriptedHttpClientFactory final : public http::HttpClientFactory {
 public:
  using Script = std::function<ScriptedAnswer(const RecordedCall&)>;

  // Every request is answered by `script`.
  explicit ScriptedHttpClientFactory(Script script) : script_(std::move(script)) {}
  // The requests are answered by `answers` in order, the last one again when
  // they run out (none: HTTP 200 with an empty body).
  explicit ScriptedHttpClientFactory(std::vector<ScriptedAnswer> answers);

  // A client open fails with `status` from now on (ok: opens again).
  void FailOpens(Status status) EXCLUDES(mu_);

  std::vector<http::HttpClientOptions> opened() const EXCLUDES(mu_);
  std::vector<RecordedCall> calls() const EXCLUDES(mu_);

  // http::HttpClientFactory:
  StatusOr<std::unique_ptr<http::HttpClient>> NewClient(
      const http::HttpClientOptions& options) override EXCLUDES(mu_);

  // What a client of `options` answers to `request` (the clients call it).
  http::ClientAnswer Answer(const http::HttpClientOptions& options,
                            const http::ClientRequest& request) EXCLUDES(mu_);

 private:
  Script script_;
  mutable Mutex mu_;
  std::vector<ScriptedAnswer> answers_ GUARDED_BY(mu_);
  size_t next_ GUARDED_BY(mu_) = 0;
  Status open_status_ GUARDED_BY(mu_);
  std::vector<http::HttpClientOptions> opened_ GUARDED_BY(mu_);
  std::vector<RecordedCall> calls_ GUARDED_BY(mu_);
};

}  // namespace export_center::fakes
