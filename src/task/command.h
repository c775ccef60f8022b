#pragma once
// Command: the only thing the channel carries (docs/dispatch.md#the-command-message).
//
// The payload is JSON {schemaVersion, eventId, taskId, exportType,
// dispatchVersion, occurredAt, traceId}; the same identifiers also travel as
// message properties beside the payload so that a dead-letter handler can
// locate the task without trusting a body that failed to decode.
//
// Compatibility (docs/dispatch.md#the-command-message): old and new consumers
// run side by side while a fleet rolls, so a release reads what the previous
// release writes and what the next release adds, and writes what the previous
// one reads. A new field is optional and older readers ignore it (DecodeCommand
// reads only the fields below); no field is removed, retyped or given another
// meaning under the same schemaVersion. A new schemaVersion takes two releases:
// release N learns to read it, N+1 may write it. Tested against the previous
// release's own messages (tests/task/command_compat_test.cc).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center::task {

inline constexpr int kCommandSchemaVersion = 1;

struct Command {
  int schema_version = kCommandSchemaVersion;
  std::string event_id;
  int64_t task_id = 0;
  std::string export_type;
  int32_t dispatch_version = 1;
  std::string occurred_at;  // ISO-8601, informational only
  std::string trace_id;
};

// Property names carried beside the payload.
inline constexpr std::string_view kPropEventId = "eventId";
inline constexpr std::string_view kPropTaskId = "taskId";
inline constexpr std::string_view kPropDispatchVersion = "dispatchVersion";
inline constexpr std::string_view kPropSchemaVersion = "schemaVersion";

using CommandProperties = std::map<std::string, std::string>;

std::string EncodeCommand(const Command& command);
CommandProperties PropertiesOf(const Command& command);

// Fails with InvalidArgument on malformed JSON, missing or mistyped fields, or
// an unsupported schemaVersion. Such a command is poison: it must never be
// acknowledged as processed (docs/task-lifecycle.md#dead-letters-and-quarantine).
StatusOr<Command> DecodeCommand(std::string_view payload);

}  // namespace export_center::task
