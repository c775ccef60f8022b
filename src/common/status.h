#pragma once
// Status and StatusOr<T>: the one error type of export-center (docs/conventions.md#errors).
//
// Every fallible call returns a Status; client-library exceptions are caught
// at the edge of each backend and translated into one of these codes. The API
// layer maps codes to envelope codes in one place (api/envelope.h).

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace export_center {

enum class StatusCode {
  kOk,
  kInvalidArgument,   // bad input from a user, a config file or a provider (permanent)
  kUnauthenticated,   // no or invalid token
  kPermissionDenied,  // authenticated but not allowed
  kNotFound,
  kConflict,          // wrong state, lost lease, lost race
  kLimitExceeded,     // a configured limit was reached (rows, bytes, active tasks)
  kUnavailable,       // transient: retrying later may succeed
  kDeadlineExceeded,  // took longer than allowed (transient for an export attempt)
  kCancelled,         // a user asked to stop
  kInternal,          // a bug or a broken invariant
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NotFound: task 12 does not exist"
  std::string ToString() const;

  // A transient failure: retrying the same operation later may succeed.
  bool IsTransient() const {
    return code_ == StatusCode::kUnavailable || code_ == StatusCode::kDeadlineExceeded;
  }

  // Returns a copy whose message is "context: message" (a quoted value, below, kept).
  Status WithContext(std::string_view context) const;

  // The part of message() that quotes a value of the exported data — a cell
  // that does not parse — and the key of its column. A message about a
  // governed column must name the column, never its value: the one place that
  // knows the task's column policy (source/column_policy_source.h) replaces the
  // quote (WithoutQuotedValue) before the message goes anywhere.
  struct QuotedValue {
    std::string column;
    size_t offset = 0;  // into message()
    size_t length = 0;
  };
  // A copy recording message()[offset, offset + length) as a value of
  // `column`. Itself when the range is not inside the message.
  Status WithQuotedValue(std::string column, size_t offset, size_t length) const;
  const std::optional<QuotedValue>& quoted_value() const { return quoted_; }
  // A copy with `replacement` in place of the quoted value, recording none.
  // Itself when it records none.
  Status WithoutQuotedValue(std::string_view replacement) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::optional<QuotedValue> quoted_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status Unauthenticated(std::string m) {
  return {StatusCode::kUnauthenticated, std::move(m)};
}
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
inline Status LimitExceeded(std::string m) { return {StatusCode::kLimitExceeded, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Holds either a value or a non-OK Status.
namespace internal {
// Prints "StatusOr::value() on an error: <status>" to stderr and aborts, in
// every build type: reading the value of a failed call is a bug, and going on
// with a default-constructed value would hide it (docs/conventions.md).
[[noreturn]] void DieOfValueOnError(const Status& status);
}  // namespace internal

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  // Anything convertible to T (e.g. an alternative of a std::variant T).
  template <typename U, typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                                    !std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, StatusOr<T>>>>
  StatusOr(U&& value) : value_(T(std::forward<U>(value))) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {      // NOLINT: implicit by design
    assert(!status_.ok() && "StatusOr built from an OK Status");
    if (status_.ok()) status_ = Internal("StatusOr built from an OK Status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok(). On an error aborts with the status, release builds too.
  T& value() & {
    if (!ok()) internal::DieOfValueOnError(status_);
    return *value_;
  }
  const T& value() const& {
    if (!ok()) internal::DieOfValueOnError(status_);
    return *value_;
  }
  T&& value() && {
    if (!ok()) internal::DieOfValueOnError(status_);
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace export_center

// Early return on error, like leveldb's pattern of checking each Status.
#define EC_RETURN_IF_ERROR(expr)                 \
  do {                                           \
    ::export_center::Status ec_status_ = (expr); \
    if (!ec_status_.ok()) return ec_status_;     \
  } while (0)

#define EC_CONCAT_INNER(a, b) a##b
#define EC_CONCAT(a, b) EC_CONCAT_INNER(a, b)
#define EC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
#define EC_ASSIGN_OR_RETURN(lhs, expr) \
  EC_ASSIGN_OR_RETURN_IMPL(EC_CONCAT(ec_statusor_, __LINE__), lhs, expr)
