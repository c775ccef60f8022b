#pragma once
// BusinessRefusalMessage: what a business service deliberately told the user
// when it refused an export (docs/provider-contract.md#error-classes).
//
// Both data routes turn a service's error answer into a Status in one place
// (source/common/business_reply.h, BusinessError); for a refusal — HTTP or
// envelope 4xx — the service's own message is meant for the user, and the
// attempt stores it as the task's failure message instead of a classified
// text (attempt/failure_message.h). A header of its own in source/ because
// dispatch/ reads it and source/common/ is the routes' private part.

#include <optional>
#include <string>

#include "common/status.h"

namespace export_center::source {

// The cleaned message (no control characters, at most 200 bytes, valid
// UTF-8) of a 4xx answer that BusinessError turned into `status`, also when a
// caller prefixed context to it; nullopt for any other status, a 5xx/408/429
// (its message may be an exception's text) or a refusal without a message.
std::optional<std::string> BusinessRefusalMessage(const Status& status);

}  // namespace export_center::source
