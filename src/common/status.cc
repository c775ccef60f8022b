#include "common/status.h"

#include <cstdio>
#include <cstdlib>

namespace export_center {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kUnauthenticated:
      return "Unauthenticated";
    case StatusCode::kPermissionDenied:
      return "PermissionDenied";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kConflict:
      return "Conflict";
    case StatusCode::kLimitExceeded:
      return "LimitExceeded";
    case StatusCode::kUnavailable:
      return "Unavailable";
    case StatusCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case StatusCode::kCancelled:
      return "Cancelled";
    case StatusCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

namespace internal {
void DieOfValueOnError(const Status& status) {
  std::fprintf(stderr, "StatusOr::value() on an error: %s\n", status.ToString().c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace internal

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  Status out(code_, std::string(context) + ": " + message_);
  if (quoted_) {
    out.quoted_ = quoted_;
    out.quoted_->offset += context.size() + 2;
  }
  return out;
}

Status Status::WithQuotedValue(std::string column, size_t offset, size_t length) const {
  if (ok() || offset > message_.size() || length > message_.size() - offset) return *this;
  Status out = *this;
  out.quoted_ = QuotedValue{std::move(column), offset, length};
  return out;
}

Status Status::WithoutQuotedValue(std::string_view replacement) const {
  if (!quoted_) return *this;
  std::string message = message_;
  message.replace(quoted_->offset, quoted_->length, replacement);
  return Status(code_, std::move(message));
}

}  // namespace export_center
