#include "attempt/failure_message.h"

#include <cctype>

#include "common/utf8.h"
#include "source/business_refusal.h"

namespace export_center::attempt {
namespace {

std::string Transient(const Status& status, FailureOrigin origin) {
  const bool slow = status.code() == StatusCode::kDeadlineExceeded;
  switch (origin) {
    case FailureOrigin::kSource:
      return slow ? "The data source did not answer in time" : "The data source was unavailable";
    case FailureOrigin::kStorage:
      return slow ? "Storage did not answer in time" : "Storage was unavailable";
    case FailureOrigin::kCenter:
      break;
  }
  // The center's own deadline is the execution deadline (consumer.max-duration-seconds).
  return slow ? "The export took longer than the maximum time allowed"
              : "The export center was temporarily unavailable";
}

// A finding the center wrote about the rows themselves — "row 3, column amount: value
// \"abc\" is not a DECIMAL" (both routes prefix the row), a limit it enforces, or the
// template safety check's reason, which the preview shows the same user — names the
// user's own data and nothing of hosts or drivers: it is what the user needs to ask the
// business team about, so it is kept, bounded. Storage failures never are.
bool IsFindingAboutTheData(std::string_view failure_code, const Status& status,
                           FailureOrigin origin) {
  if (origin == FailureOrigin::kStorage) return false;
  if (failure_code == "LIMIT_EXCEEDED" || failure_code == "UNSAFE_TEMPLATE") return true;
  if (failure_code != "INVALID_DATA") return false;
  const std::string_view m = status.message();
  return m.size() > 4 && m.substr(0, 4) == "row " && std::isdigit(static_cast<unsigned char>(m[4]));
}

constexpr size_t kMaxFindingBytes = 1000;

}  // namespace

std::string UserFailureMessage(std::string_view failure_code, const Status& status,
                               FailureOrigin origin) {
  if (origin == FailureOrigin::kSource) {
    if (auto said = source::BusinessRefusalMessage(status)) return *said;
  }
  if (failure_code == "CANCELLED") return "Cancelled by the user";
  if (IsFindingAboutTheData(failure_code, status, origin)) {
    return utf8::Excerpt(status.message(), kMaxFindingBytes);
  }
  if (failure_code == "STALE") {
    return "The export's query logic was upgraded after the task was created; export again";
  }
  if (failure_code == "INCONSISTENT") {
    return "The data changed while it was exported, so the file could not be trusted";
  }
  if (failure_code == "UNSAFE_TEMPLATE") {
    return "The export's SQL template was refused by the safety check; no SQL ran";
  }
  if (failure_code == "FILE_KEY_UNAVAILABLE") {
    return "The file's password protection can no longer be applied (its key was rotated "
           "away); export again with a new password";
  }
  if (status.IsTransient()) return Transient(status, origin);
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return origin == FailureOrigin::kSource
                 ? "The business system sent data this export type does not accept"
                 : "The export's definition or parameters are not valid";
    case StatusCode::kPermissionDenied:
    case StatusCode::kUnauthenticated:
      return "The business system refused this export";
    case StatusCode::kNotFound:
      return "The business system does not know this export";
    case StatusCode::kLimitExceeded:
      return "The export has more rows or a larger file than this export type allows";
    case StatusCode::kCancelled:
      return "Cancelled by the user";
    default:
      return "Internal error; support can find the details under the task id";
  }
}

}  // namespace export_center::attempt
