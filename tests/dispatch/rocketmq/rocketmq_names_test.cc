#include "dispatch/rocketmq/rocketmq_names.h"

#include <gtest/gtest.h>

namespace export_center::dispatch {
namespace {

TEST(RocketMqNames, EveryNameIsThePrefixPlusAFixedName) {
  RocketMqNames n = RocketMqNamesFor("test-");
  EXPECT_EQ(n.command_topic, "test-export-center-command-v1");
  EXPECT_EQ(n.producer_group, "test-export-center-publisher-v1");
  EXPECT_EQ(n.worker_group, "test-export-center-worker-v1");
  EXPECT_EQ(n.dlq_handler_group, "test-export-center-dlq-handler-v1");
  EXPECT_EQ(n.dead_letter_topic, "%DLQ%test-export-center-worker-v1");
  EXPECT_EQ(kRocketMqCommandTag, "EXPORT_TASK");
  EXPECT_EQ(kRocketMqCommandQueues, 4);
  EXPECT_EQ(kRocketMqPermReadWrite, 6);
}

TEST(RocketMqNames, TheEmptyPrefixIsProduction) {
  RocketMqNames n = RocketMqNamesFor("");
  EXPECT_EQ(n.command_topic, "export-center-command-v1");
  EXPECT_EQ(n.dead_letter_topic, "%DLQ%export-center-worker-v1");
}

TEST(RocketMqNames, TheLongestNameFitsTheBroker) {
  // The broker refuses topic and group names over 127 characters; config/
  // allows prefixes up to 64.
  RocketMqNames n = RocketMqNamesFor(std::string(64, 'p'));
  for (const std::string& name : {n.command_topic, n.producer_group, n.worker_group,
                                  n.dlq_handler_group, n.dead_letter_topic}) {
    EXPECT_LE(name.size(), 127u) << name;
  }
}

TEST(RocketMqNames, DeliveryLimitAndReconsumeTimes) {
  // channel.delivery-limit 3 = maxReconsumeTimes 2 (the design's value): the
  // deliveries are reconsume times 0, 1, 2 = delivery counts 1, 2, 3.
  EXPECT_EQ(WorkerRetryMaxTimes(3), 2);
  EXPECT_EQ(WorkerRetryMaxTimes(1), 0);
  EXPECT_EQ(DeliveryCountOf(0), 1);
  EXPECT_EQ(DeliveryCountOf(2), 3);
}

}  // namespace
}  // namespace export_center::dispatch
