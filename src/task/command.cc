#include "task/command.h"

#include <nlohmann/json.hpp>

#include "common/ids.h"
#include "common/json_dump.h"
#include "common/nesting.h"

namespace export_center::task {

std::string EncodeCommand(const Command& c) {
  nlohmann::json j = {
      {"schemaVersion", c.schema_version},
      {"eventId", c.event_id},
      {"taskId", std::to_string(c.task_id)},
      {"exportType", c.export_type},
      {"dispatchVersion", c.dispatch_version},
      {"occurredAt", c.occurred_at},
      {"traceId", c.trace_id},
  };
  return DumpTolerant(j);
}

CommandProperties PropertiesOf(const Command& c) {
  return {
      {std::string(kPropEventId), c.event_id},
      {std::string(kPropTaskId), std::to_string(c.task_id)},
      {std::string(kPropDispatchVersion), std::to_string(c.dispatch_version)},
      {std::string(kPropSchemaVersion), std::to_string(c.schema_version)},
  };
}

StatusOr<Command> DecodeCommand(std::string_view payload) {
  // A message nested past kMaxNesting is refused before a tree exists
  // (common/nesting.h): a dump or comparison of it would recurse per level.
  EC_RETURN_IF_ERROR(CheckJsonNesting(payload).WithContext("command"));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(payload);
  } catch (const nlohmann::json::parse_error& e) {
    // The parser's own words say where and why; the non-throwing parse only
    // says that it failed. (Its "last read" quotes payload bytes as they
    // are: whoever stores the message makes it valid UTF-8.)
    return InvalidArgument(std::string("command is not JSON: ") + e.what());
  }
  if (!j.is_object()) return InvalidArgument("command is not a JSON object");
  auto field = [&](const char* name) -> const nlohmann::json* {
    auto it = j.find(name);
    return it == j.end() ? nullptr : &*it;
  };
  Command c;
  const auto* schema = field("schemaVersion");
  if (!schema || !schema->is_number_integer())
    return InvalidArgument("command lacks schemaVersion");
  c.schema_version = schema->get<int>();
  if (c.schema_version != kCommandSchemaVersion) {
    return InvalidArgument("unsupported command schemaVersion " + std::to_string(c.schema_version));
  }
  const auto* event_id = field("eventId");
  const auto* task_id = field("taskId");
  const auto* type = field("exportType");
  const auto* version = field("dispatchVersion");
  if (!event_id || !event_id->is_string() || event_id->get<std::string>().empty()) {
    return InvalidArgument("command lacks eventId");
  }
  if (!task_id || !task_id->is_string()) return InvalidArgument("command lacks taskId");
  auto id = ParseId(task_id->get<std::string>());
  if (!id) return InvalidArgument("command taskId is not a valid id");
  if (!type || !type->is_string()) return InvalidArgument("command lacks exportType");
  if (!version || !version->is_number_integer() || version->get<int64_t>() < 1 ||
      version->get<int64_t>() > INT32_MAX) {
    return InvalidArgument("command lacks a valid dispatchVersion");
  }
  c.event_id = event_id->get<std::string>();
  c.task_id = *id;
  c.export_type = type->get<std::string>();
  c.dispatch_version = version->get<int32_t>();
  if (const auto* at = field("occurredAt"); at && at->is_string())
    c.occurred_at = at->get<std::string>();
  if (const auto* tr = field("traceId"); tr && tr->is_string()) c.trace_id = tr->get<std::string>();
  return c;
}

}  // namespace export_center::task
