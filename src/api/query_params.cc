#include "api/query_params.h"

#include <algorithm>
#include <cstdio>
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
  if (int64_t{*page - 1} * *size >= store::kExactTotalBound) {
    return InvalidArgument("page reaches past the first " +
                           std::to_string(store::kExactTotalBound) +
                           " rows; page on with the cursor: after=nextCursor");
  }
  return Status::Ok();
}

namespace {

// A check over the cursor's digits: a cursor cut or mistyped is refused,
// not read as another position.
uint16_t CursorCheck(std::string_view digits) {
  uint32_t h = 2166136261u;
  for (char c : digits) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return static_cast<uint16_t>(h ^ (h >> 16));
}

constexpr size_t kCursorDigits = 32;  // 16 hex digits each of the time and the id

}  // namespace

std::string EncodePageCursor(const store::PageKey& key) {
  char digits[kCursorDigits + 1];
  std::snprintf(digits, sizeof digits, "%016llx%016llx", static_cast<unsigned long long>(key.at),
                static_cast<unsigned long long>(key.id));
  char check[5];
  std::snprintf(check, sizeof check, "%04x", CursorCheck(digits));
  return std::string("k") + digits + check;
}

std::optional<store::PageKey> DecodePageCursor(std::string_view cursor) {
  if (cursor.size() != 1 + kCursorDigits + 4 || cursor[0] != 'k') return std::nullopt;
  auto hex = [](std::string_view text) -> std::optional<uint64_t> {
    uint64_t v = 0;
    for (char c : text) {
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      v = v << 4 | static_cast<uint64_t>(d);
    }
    return v;
  };
  const std::string_view digits = cursor.substr(1, kCursorDigits);
  auto at = hex(digits.substr(0, 16));
  auto id = hex(digits.substr(16, 16));
  auto check = hex(cursor.substr(1 + kCursorDigits));
  if (!at || !id || !check || *check != CursorCheck(digits)) return std::nullopt;
  if (*at > static_cast<uint64_t>(INT64_MAX) || *id > static_cast<uint64_t>(INT64_MAX)) {
    return std::nullopt;
  }
  return store::PageKey{static_cast<int64_t>(*at), static_cast<int64_t>(*id)};
}

StatusOr<std::optional<store::PageKey>> ReadPageCursor(const http::HttpRequest& req) {
  if (!req.HasQuery("after") || req.Query("after").empty()) {
    return std::optional<store::PageKey>();
  }
  auto key = DecodePageCursor(req.Query("after"));
  if (!key) return InvalidArgument("after must be a nextCursor this API returned");
  return std::optional<store::PageKey>(*key);
}

nlohmann::json PageFields(int64_t total, bool total_is_exact,
                          const std::optional<store::PageKey>& next, int page, int size) {
  return {{"total", std::to_string(total)},
          {"totalIsExact", total_is_exact},
          {"nextCursor", next ? nlohmann::json(EncodePageCursor(*next)) : nlohmann::json()},
          {"page", page},
          {"size", size}};
}

}  // namespace export_center::api
