#pragma once
// One POST to a business service whose answer is capped while it is read:
// shared by both data routes (provider batches and the SQL contract), so a
// service that streams an endless or huge body costs at most `max_bytes` of
// memory and `deadline` of time, never the whole answer.

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "source/common/service_answer.h"

namespace export_center::source {

struct CappedAnswer {
  enum class Outcome {
    kRead,      // the whole body was read (any HTTP status)
    kTooLarge,  // the declared or the received length passed max_bytes: reading stopped
    kTooSlow,   // the deadline passed while the body trickled in: reading stopped
    kNotSent,   // no answer: connect, send or read failed (see `error`)
  };
  Outcome outcome = Outcome::kNotSent;
  int status = 0;  // the HTTP status, also when reading stopped early
  std::string body;
  httplib::Error error = httplib::Error::Success;
};

// Sends `body` as application/json to `path` with `headers`. Thread-compatible:
// one call at a time per client.
CappedAnswer PostCapped(httplib::Client* client, const std::string& path,
                        const httplib::Headers& headers, const std::string& body, int64_t max_bytes,
                        std::chrono::steady_clock::time_point deadline);

// The verdict PostCapped gives, for an answer handed over in place of the
// network: kTooLarge past `max_bytes`, else kRead with its status and body.
CappedAnswer AnswerInPlace(const ServiceAnswerFn& answer, const std::string& path,
                           const std::string& body, int64_t max_bytes);

}  // namespace export_center::source
