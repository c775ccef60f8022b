#pragma once
// UserFailureMessage: the text a task shows its user as failure_message
// (docs/task-lifecycle.md#failure-classes).
//
// A failure's Status message is the operator's detail: it may name hosts,
// endpoint URLs, SQL, driver errors or an exception's text. It goes to the
// log under the task id; the task stores instead a short text chosen by the
// failure code, the status code and where the failure came from. A business
// service's deliberate refusal (a 4xx with a message,
// source/business_refusal.h) is shown as the service sent it (cleaned, at
// most 200 bytes, valid UTF-8); so is a finding the center wrote about the
// user's data (a cell that is not what its column says, a limit, the template
// safety check's reason), at most 1000 bytes. The download center localises by
// failure_code and shows this text after its own reason.
//
// Pure functions; any thread.

#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center::attempt {

// Which side of the attempt a failure came from: the rows' source (the
// business service, the SQL contract, a datasource), the file's storage, or
// the center itself (its database, its own checks, shutdown).
enum class FailureOrigin { kCenter, kSource, kStorage };

// The user-facing failure_message for a failure stored with `failure_code`
// (FailureCode(status), or a code the source or state set: STALE,
// INCONSISTENT, UNSAFE_TEMPLATE, CANCELLED). Contains nothing of
// status.message() but a business refusal's own message or a finding about the data.
std::string UserFailureMessage(std::string_view failure_code, const Status& status,
                               FailureOrigin origin);

}  // namespace export_center::attempt
