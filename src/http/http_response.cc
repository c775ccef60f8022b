#include "http/http_response.h"

#include <utility>

namespace export_center::http {

void HttpResponse::SetContent(std::string content, std::string_view content_type) {
  body = std::move(content);
  stream.reset();
  stream_length = 0;
  live.reset();
  SetHeader("Content-Type", std::string(content_type));
}

void HttpResponse::SetStream(std::shared_ptr<BodySource> source, uint64_t length,
                             std::string_view content_type) {
  body.clear();
  stream = std::move(source);
  stream_length = length;
  live.reset();
  SetHeader("Content-Type", std::string(content_type));
}

void HttpResponse::SetLive(std::shared_ptr<LiveSource> source, std::string_view content_type) {
  body.clear();
  stream.reset();
  stream_length = 0;
  live = std::move(source);
  SetHeader("Content-Type", std::string(content_type));
}

}  // namespace export_center::http
