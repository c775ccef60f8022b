#include "source/common/capped_post.h"

#include <charconv>

namespace export_center::source {

CappedAnswer PostCapped(httplib::Client* client, const std::string& path,
                        const httplib::Headers& headers, const std::string& body, int64_t max_bytes,
                        std::chrono::steady_clock::time_point deadline) {
  CappedAnswer answer;
  bool too_large = false;
  bool too_slow = false;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = headers;
  req.set_header("Content-Type", "application/json");
  req.body = body;
  req.response_handler = [&](const httplib::Response& res) {
    answer.status = res.status;
    // A declared length over the limit fails before a byte is read.
    std::string length = res.get_header_value("Content-Length");
    int64_t declared = 0;
    auto parsed = std::from_chars(length.data(), length.data() + length.size(), declared);
    if (parsed.ec == std::errc::result_out_of_range || declared > max_bytes) too_large = true;
    return !too_large;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (static_cast<int64_t>(answer.body.size() + n) > max_bytes) too_large = true;
    if (std::chrono::steady_clock::now() > deadline) too_slow = true;
    if (too_large || too_slow) return false;
    answer.body.append(data, n);
    return true;
  };
  httplib::Response res;
  bool sent = client->send(req, res, answer.error);
  if (too_large) {
    answer.outcome = CappedAnswer::Outcome::kTooLarge;
  } else if (too_slow) {
    answer.outcome = CappedAnswer::Outcome::kTooSlow;
  } else if (!sent) {
    answer.outcome = CappedAnswer::Outcome::kNotSent;
  } else {
    answer.outcome = CappedAnswer::Outcome::kRead;
    answer.status = res.status;
  }
  return answer;
}

CappedAnswer AnswerInPlace(const ServiceAnswerFn& answer, const std::string& path,
                           const std::string& body, int64_t max_bytes) {
  ServiceAnswer given = answer(path, body);
  CappedAnswer out;
  out.status = given.status;
  if (static_cast<int64_t>(given.body.size()) > max_bytes) {
    out.outcome = CappedAnswer::Outcome::kTooLarge;
    return out;
  }
  out.outcome = CappedAnswer::Outcome::kRead;
  out.body = std::move(given.body);
  return out;
}

}  // namespace export_center::source
