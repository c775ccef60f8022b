// The webhook body's times (docs/notifications.md#the-body) come from the one
// formatter in common/time_format.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/notification_outbox.h"
#include "task/task.h"

namespace export_center::store {
namespace {

TEST(TaskEndedEvent, TimesAreIsoMillisIncludingBefore1970) {
  task::Task t;
  t.id = 7;
  t.status = task::TaskState::kFailed;
  t.requested_at = -1;  // a hand-edited row: shown, not garbled
  t.completed_at = 1714552200123;
  const auto event = nlohmann::json::parse(EncodeTaskEndedEvent(t, "evt-1", -1001));
  EXPECT_EQ(event["occurredAt"], "1969-12-31T23:59:58.999Z");
  EXPECT_EQ(event["task"]["requestedAt"], "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(event["task"]["completedAt"], "2024-05-01T08:30:00.123Z");
  EXPECT_TRUE(event["task"]["startedAt"].is_null());
}

}  // namespace
}  // namespace export_center::store
