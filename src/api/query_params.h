#pragma once
// Query parameters shared by the API's paged lists (the task list, the
// download audit): docs/http-api.md#value-conventions.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "http/http_request.h"
#include "store/task_catalog.h"

namespace export_center::api {

// `page` (1..1000000) and `size` (1..100), digits only without a leading zero.
// An absent parameter leaves its value as it is; a malformed one is
// InvalidArgument naming it. A page past the first kExactTotalBound rows is
// InvalidArgument too: deeper pages are read by cursor (`after`).
Status ReadPageParams(const http::HttpRequest& req, int* page, int* size);

// `after`, the cursor a page's nextCursor gave: nullopt when absent or
// empty, InvalidArgument naming `after` when it is not a cursor this API
// made (docs/http-api.md#paging).
StatusOr<std::optional<store::PageKey>> ReadPageCursor(const http::HttpRequest& req);

// The opaque cursor of `key`, and back: nullopt for anything EncodePageCursor
// did not make.
std::string EncodePageCursor(const store::PageKey& key);
std::optional<store::PageKey> DecodePageCursor(std::string_view cursor);

// The paging fields of a list's data: total (a string of digits),
// totalIsExact, nextCursor (null on the last page), page and size.
nlohmann::json PageFields(int64_t total, bool total_is_exact,
                          const std::optional<store::PageKey>& next, int page, int size);

}  // namespace export_center::api
