#include "tests/fakes/scripted_http_client.h"

#include <utility>

namespace export_center::fakes {
namespace {

class ScriptedHttpClient final : public http::HttpClient {
 public:
  ScriptedHttpClient(ScriptedHttpClientFactory* factory, http::HttpClientOptions options)
      : factory_(factory), options_(std::move(options)) {}

  http::ClientAnswer Send(const http::ClientRequest& request) override {
    return factory_->Answer(options_, request);
  }

 private:
  ScriptedHttpClientFactory* factory_;
  const http::HttpClientOptions options_;
};

}  // namespace

ScriptedHttpClientFactory::ScriptedHttpClientFactory(std::vector<ScriptedAnswer> answers)
    : answers_(std::move(answers)) {}

void ScriptedHttpClientFactory::FailOpens(Status status) {
  MutexLock lock(&mu_);
  open_status_ = std::move(status);
}

std::vector<http::HttpClientOptions> ScriptedHttpClientFactory::opened() const {
  MutexLock lock(&mu_);
  return opened_;
}

std::vector<RecordedCall> ScriptedHttpClientFactory::calls() const {
  MutexLock lock(&mu_);
  return calls_;
}

StatusOr<std::unique_ptr<http::HttpClient>> ScriptedHttpClientFactory::NewClient(
    const http::HttpClientOptions& options) {
  MutexLock lock(&mu_);
  if (!open_status_.ok()) return open_status_;
  opened_.push_back(options);
  return std::unique_ptr<http::HttpClient>(std::make_unique<ScriptedHttpClient>(this, options));
}

http::ClientAnswer ScriptedHttpClientFactory::Answer(const http::HttpClientOptions& options,
                                                     const http::ClientRequest& request) {
  RecordedCall call{options, request};
  ScriptedAnswer scripted;
  {
    MutexLock lock(&mu_);
    calls_.push_back(call);
    if (!script_ && !answers_.empty()) {
      scripted = answers_[next_ < answers_.size() ? next_ : answers_.size() - 1];
      ++next_;
    }
  }
  if (script_) scripted = script_(call);
  http::ClientAnswer answer;
  if (scripted.error != http::ClientError::kNone) {
    answer.error = scripted.error;
    answer.error_text = scripted.error_text;
    return answer;  // kNotSent
  }
  answer.status = scripted.status;
  if (scripted.too_slow) {
    answer.outcome = http::ClientAnswer::Outcome::kTooSlow;
  } else if (request.read_body &&
             static_cast<int64_t>(scripted.body.size()) > request.max_body_bytes) {
    answer.outcome = http::ClientAnswer::Outcome::kTooLarge;
  } else {
    answer.outcome = http::ClientAnswer::Outcome::kRead;
    answer.headers = std::move(scripted.headers);
    if (request.read_body) answer.body = std::move(scripted.body);
  }
  return answer;
}

}  // namespace export_center::fakes
