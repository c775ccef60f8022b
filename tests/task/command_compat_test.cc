// The command message's compatibility rule (task/command.h, docs/dispatch.md#the-command-message):
// this release reads every message the previous release writes and the next release's
// additions, and writes what the previous release reads — old and new consumers run side
// by side while a fleet rolls. The previous release's messages are fixtures its own code
// wrote (tests/task/fixtures/generate.sh).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "task/command.h"

namespace export_center::task {
namespace {

struct Message {
  std::string file;
  std::string payload;
  CommandProperties properties;
};

std::vector<Message> Read(const std::filesystem::path& path) {
  std::vector<Message> messages;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    Message m{path.filename().string(), j.at("payload").get<std::string>(), {}};
    for (const auto& [name, value] : j.at("properties").items()) {
      m.properties[name] = value.get<std::string>();
    }
    messages.push_back(m);
  }
  return messages;
}

// Every released version's messages: commands-<release>.jsonl.
std::vector<Message> ReleasedMessages() {
  std::vector<Message> messages;
  for (const auto& entry : std::filesystem::directory_iterator(EC_COMMAND_FIXTURES)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("commands-", 0) != 0 || name == "commands-next-additions.jsonl") continue;
    for (Message& m : Read(entry.path())) messages.push_back(std::move(m));
  }
  return messages;
}

TEST(CommandCompat, ThePreviousReleasesMessagesAreFixtures) {
  std::vector<Message> messages = ReleasedMessages();
  EXPECT_GE(messages.size(), 4u);
  EXPECT_TRUE(
      std::filesystem::exists(std::filesystem::path(EC_COMMAND_FIXTURES) / "commands-0.9.0.jsonl"));
}

// What the previous release writes decodes to the command its properties name.
TEST(CommandCompat, ReadsWhatThePreviousReleaseWrites) {
  for (const Message& m : ReleasedMessages()) {
    auto decoded = DecodeCommand(m.payload);
    ASSERT_TRUE(decoded.ok()) << m.file << ": " << decoded.status().ToString() << "\n" << m.payload;
    EXPECT_EQ(std::to_string(decoded->task_id), m.properties.at(std::string(kPropTaskId)));
    EXPECT_EQ(decoded->event_id, m.properties.at(std::string(kPropEventId)));
    EXPECT_EQ(std::to_string(decoded->dispatch_version),
              m.properties.at(std::string(kPropDispatchVersion)));
    EXPECT_EQ(std::to_string(decoded->schema_version),
              m.properties.at(std::string(kPropSchemaVersion)));
    // The dead-letter handler reads only the properties: this release writes the same.
    EXPECT_EQ(PropertiesOf(*decoded), m.properties) << m.payload;
  }
}

// This release writes what the previous release reads: the same schemaVersion and
// every field the previous release wrote, with the same value (additions may follow).
TEST(CommandCompat, WritesWhatThePreviousReleaseReads) {
  for (const Message& m : ReleasedMessages()) {
    auto decoded = DecodeCommand(m.payload);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    nlohmann::json written = nlohmann::json::parse(EncodeCommand(*decoded));
    nlohmann::json previous = nlohmann::json::parse(m.payload);
    for (const auto& [field, value] : previous.items()) {
      ASSERT_TRUE(written.contains(field)) << field << " no longer written: " << m.payload;
      EXPECT_EQ(written.at(field), value) << field;
    }
  }
}

// The next release may add optional fields (and properties) under the same
// schemaVersion: this release ignores them and reads the same command.
TEST(CommandCompat, ReadsTheNextReleasesAdditions) {
  std::vector<Message> additions =
      Read(std::filesystem::path(EC_COMMAND_FIXTURES) / "commands-next-additions.jsonl");
  ASSERT_EQ(additions.size(), 2u);
  std::vector<Message> released = ReleasedMessages();
  for (const Message& m : additions) {
    auto decoded = DecodeCommand(m.payload);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << "\n" << m.payload;
    bool matched = false;
    for (const Message& r : released) {
      if (r.properties.at(std::string(kPropEventId)) != decoded->event_id) continue;
      auto base = DecodeCommand(r.payload);
      ASSERT_TRUE(base.ok());
      EXPECT_EQ(EncodeCommand(*decoded), EncodeCommand(*base)) << m.payload;
      matched = true;
    }
    EXPECT_TRUE(matched) << "no released message with the event id of " << m.payload;
  }
}

// A schemaVersion this release does not read is poison (dead letters, then
// quarantine): which is why no release writes a new one before the one before it
// reads it.
TEST(CommandCompat, AnUnreadSchemaVersionIsRefused) {
  for (const Message& m : ReleasedMessages()) {
    nlohmann::json j = nlohmann::json::parse(m.payload);
    j["schemaVersion"] = kCommandSchemaVersion + 1;
    auto decoded = DecodeCommand(j.dump());
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace export_center::task
