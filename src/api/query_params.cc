#include "api/query_params.h"

#include <algorithm>
#include <optional>
#include <string>

namespace export_center::api {
namespace {

// Strict positive integer; nullopt if malformed or out of [lo, hi].
std::optional<int> ParseIntParam(const std::string& text, int lo, int hi) {
  if (text.empty() || text.size() > 9 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int v = std::stoi(text);
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

}  // namespace

Status ReadPageParams(const http::HttpRequest& req, int* page, int* size) {
  if (req.HasQuery("page")) {
    auto value = ParseIntParam(req.Query("page"), 1, 1000000);
    if (!value) return InvalidArgument("page must be a whole number from 1");
    *page = *value;
  }
  if (req.HasQuery("size")) {
    auto value = ParseIntParam(req.Query("size"), 1, 100);
    if (!value) return InvalidArgument("size must be a whole number from 1 to 100");
    *size = *value;
  }
  return Status::Ok();
}

}  // namespace export_center::api
