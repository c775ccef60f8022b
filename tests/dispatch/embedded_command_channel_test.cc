#include "dispatch/embedded_command_channel.h"

#include <gtest/gtest.h>

#include <thread>

namespace export_center::dispatch {
namespace {

using namespace std::chrono_literals;

TEST(EmbeddedCommandChannel, DeliversPayloadAndProperties) {
  auto channel = NewEmbeddedCommandChannel(3);
  ASSERT_TRUE(channel->Publish("p1", {{"taskId", "7"}}).ok());
  Delivery seen;
  ASSERT_TRUE(channel->ConsumeOne(100ms, [&](const Delivery& d) {
    seen = d;
    return DeliveryOutcome::kAck;
  }));
  EXPECT_EQ(seen.payload, "p1");
  EXPECT_EQ(seen.properties.at("taskId"), "7");
  EXPECT_EQ(seen.delivery_count, 1);
  EXPECT_FALSE(channel->ConsumeOne(20ms, [](const Delivery&) { return DeliveryOutcome::kAck; }));
}

TEST(EmbeddedCommandChannel, RejectedCommandIsRedeliveredThenDeadLettered) {
  auto channel = NewEmbeddedCommandChannel(3);
  ASSERT_TRUE(channel->Publish("{broken", {{"taskId", "9"}}).ok());
  std::vector<int> counts;
  while (channel->ConsumeOne(20ms, [&](const Delivery& d) {
    counts.push_back(d.delivery_count);
    return DeliveryOutcome::kReject;
  })) {
  }
  EXPECT_EQ(counts, (std::vector<int>{1, 2, 3}));
  Delivery dead;
  ASSERT_TRUE(channel->ConsumeDeadLetter(100ms, [&](const Delivery& d) {
    dead = d;
    return DeliveryOutcome::kAck;
  }));
  EXPECT_EQ(dead.payload, "{broken");
  EXPECT_EQ(dead.properties.at("taskId"), "9");
  EXPECT_FALSE(dead.message_id.empty());
  EXPECT_FALSE(channel->ConsumeDeadLetter(20ms, [](const Delivery&) {
    return DeliveryOutcome::kAck;
  })) << "an acknowledged dead letter is gone";
}

TEST(EmbeddedCommandChannel, RejectedDeadLetterIsHandedOverAgain) {
  auto channel = NewEmbeddedCommandChannel(1);
  ASSERT_TRUE(channel->Publish("{broken", {{"taskId", "9"}}).ok());
  ASSERT_TRUE(channel->ConsumeOne(20ms, [](const Delivery&) { return DeliveryOutcome::kReject; }));
  std::vector<std::string> seen;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(channel->ConsumeDeadLetter(100ms,
                                           [&](const Delivery& d) {
                                             seen.push_back(d.message_id);
                                             return i < 2 ? DeliveryOutcome::kReject
                                                          : DeliveryOutcome::kAck;
                                           }))
        << "dead letter dropped after handover " << i;
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], seen[2]);  // the same message each time
  EXPECT_FALSE(
      channel->ConsumeDeadLetter(20ms, [](const Delivery&) { return DeliveryOutcome::kAck; }));
}

TEST(EmbeddedCommandChannel, CloseWakesBlockedConsumers) {
  auto channel = NewEmbeddedCommandChannel(1);
  std::thread closer([&] {
    std::this_thread::sleep_for(50ms);
    channel->Close();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(channel->ConsumeOne(5s, [](const Delivery&) { return DeliveryOutcome::kAck; }));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  closer.join();
  EXPECT_FALSE(channel->Publish("x", {}).ok());
}

}  // namespace
}  // namespace export_center::dispatch
