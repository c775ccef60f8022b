// The Remoting frame codec: round trips, frames split across reads, and
// malformed input (truncated frames, bad lengths, bad headers) refused
// without a crash.

#include "rocketmq/remoting/remoting_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rocketmq/route_data.h"

namespace export_center::rocketmq::remoting {
namespace {

using rocketmq::ParseClusterInfo;
using rocketmq::ParseTopicRoute;

std::string Int32(uint32_t v) {
  std::string s;
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>(v >> shift));
  return s;
}

RemotingCommand Sample() {
  RemotingCommand c = RemotingCommand::Request(310);
  c.opaque = 42;
  c.remark = "héllo";
  c.Set("a", "producer-group").Set("e", 3).Set("k", false);
  c.body = std::string("bin\0ary\x01\x02", 9);
  return c;
}

TEST(RemotingCommand, FrameRoundTrip) {
  const RemotingCommand in = Sample();
  const std::string frame = EncodeFrame(in);
  // length prefix = everything after it; header tag = JSON (0) + header length
  ASSERT_GE(frame.size(), 8u);
  EXPECT_EQ(frame.substr(0, 4), Int32(static_cast<uint32_t>(frame.size() - 4)));
  EXPECT_EQ(static_cast<unsigned char>(frame[4]), 0) << "serialize type JSON";
  StatusOr<RemotingCommand> out = DecodeFrame(std::string_view(frame).substr(4));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->code, 310);
  EXPECT_EQ(out->opaque, 42);
  EXPECT_EQ(out->language, "CPP");
  EXPECT_EQ(out->version, kClientVersion);
  EXPECT_EQ(out->remark, "héllo");
  EXPECT_EQ(out->ext_fields, in.ext_fields);
  EXPECT_EQ(out->body, in.body);
  EXPECT_FALSE(out->is_response());
  EXPECT_EQ(*out->Ext("a"), "producer-group");
  EXPECT_EQ(out->ExtInt("e").value(), 3);
  EXPECT_FALSE(out->ExtInt("a").ok());
  EXPECT_FALSE(out->ExtInt("missing").ok());
}

TEST(RemotingCommand, HeaderIsTheJsonRocketMqExpects) {
  const std::string frame = EncodeFrame(Sample());
  const uint32_t header_length = (static_cast<unsigned char>(frame[5]) << 16) |
                                 (static_cast<unsigned char>(frame[6]) << 8) |
                                 static_cast<unsigned char>(frame[7]);
  nlohmann::json j = nlohmann::json::parse(frame.substr(8, header_length));
  EXPECT_EQ(j["code"], 310);
  EXPECT_EQ(j["flag"], 0);
  EXPECT_EQ(j["opaque"], 42);
  EXPECT_EQ(j["extFields"]["e"], "3") << "extFields values are strings";
  EXPECT_EQ(j["extFields"]["k"], "false");
}

TEST(FrameReader, ReassemblesFramesSplitAnywhere) {
  RemotingCommand a = Sample();
  RemotingCommand b = RemotingCommand::ResponseTo(a, 0, "");
  b.body = "second";
  const std::string stream = EncodeFrame(a) + EncodeFrame(b);
  for (size_t chunk = 1; chunk <= stream.size(); chunk += 7) {
    FrameReader reader;
    std::vector<RemotingCommand> got;
    for (size_t pos = 0; pos < stream.size(); pos += chunk) {
      reader.Append(std::string_view(stream).substr(pos, chunk));
      while (true) {
        auto next = reader.Next();
        ASSERT_TRUE(next.ok()) << next.status().ToString();
        if (!next->has_value()) break;
        got.push_back(std::move(**next));
      }
    }
    ASSERT_EQ(got.size(), 2u) << "chunk " << chunk;
    EXPECT_EQ(got[0].body, a.body);
    EXPECT_TRUE(got[1].is_response());
    EXPECT_EQ(got[1].opaque, 42);
    EXPECT_EQ(got[1].body, "second");
    EXPECT_EQ(reader.buffered(), 0u);
  }
}

TEST(FrameReader, WaitsForTheRestOfATruncatedFrame) {
  const std::string frame = EncodeFrame(Sample());
  FrameReader reader;
  reader.Append(std::string_view(frame).substr(0, frame.size() - 1));
  auto next = reader.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
  reader.Append(std::string_view(frame).substr(frame.size() - 1));
  next = reader.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->has_value());
}

TEST(FrameReader, RefusesBadLengths) {
  for (uint32_t length : {0u, 3u, kMaxFrameLength + 1, 0xFFFFFFFFu}) {
    FrameReader reader;
    reader.Append(Int32(length) + "xxxxxxxx");
    auto next = reader.Next();
    EXPECT_FALSE(next.ok()) << length;
    EXPECT_EQ(next.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(DecodeFrame, RefusesMalformedHeaders) {
  // header length past the frame
  EXPECT_FALSE(DecodeFrame(Int32(100) + "{}").ok());
  // not JSON, JSON but not an object, a non-integer code
  EXPECT_FALSE(DecodeFrame(Int32(3) + "{x}").ok());
  EXPECT_FALSE(DecodeFrame(Int32(2) + "[]").ok());
  EXPECT_FALSE(DecodeFrame(Int32(12) + "{\"code\":\"a\"}").ok());
  // unknown serialize type
  EXPECT_FALSE(DecodeFrame(Int32((7u << 24) | 2) + "{}").ok());
  // shorter than the header tag
  EXPECT_FALSE(DecodeFrame("ab").ok());
  // a minimal valid one
  StatusOr<RemotingCommand> ok = DecodeFrame(Int32(2) + "{}body");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->body, "body");
}

// docs/fuzzing.md#nesting: a header value nested a million deep (its extFields are dumped
// into strings, which recursed per level) is refused before a tree exists
// (common/nesting.h); so are a NameServer's route and cluster answers.
TEST(DecodeFrame, RefusesHeadersNestedAMillionDeep) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  const std::string header = R"({"code":0,"extFields":{"a":)" + deep + "}}";
  StatusOr<RemotingCommand> c = DecodeFrame(Int32(static_cast<uint32_t>(header.size())) + header);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "remoting header: JSON nested deeper than 64 levels");
  auto route = ParseTopicRoute(R"({"brokerDatas":)" + deep + "}");
  ASSERT_FALSE(route.ok());
  EXPECT_NE(route.status().message().find("JSON nested deeper than 64 levels"), std::string::npos)
      << route.status().message();
  EXPECT_FALSE(ParseClusterInfo(R"({"brokerAddrTable":)" + deep + "}").ok());
}

// RocketMQ's binary header layout (serialize type 1), as a broker configured
// for it answers.
TEST(DecodeFrame, ReadsTheBinaryHeaderLayout) {
  std::string h;
  h += std::string("\x00\x28", 2);  // code 40
  h += '\x00';                      // language JAVA
  h += std::string("\x01\x91", 2);  // version 401
  h += Int32(7);                    // opaque
  h += Int32(2);                    // flag: one-way
  h += Int32(2) + "hi";             // remark
  std::string ext = std::string("\x00\x0d", 2) + "consumerGroup" + Int32(1) + "g";
  h += Int32(static_cast<uint32_t>(ext.size())) + ext;
  StatusOr<RemotingCommand> c =
      DecodeFrame(Int32((1u << 24) | static_cast<uint32_t>(h.size())) + h + "B");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->code, 40);
  EXPECT_EQ(c->language, "JAVA");
  EXPECT_EQ(c->version, 401);
  EXPECT_EQ(c->opaque, 7);
  EXPECT_TRUE(c->is_oneway());
  EXPECT_EQ(c->remark, "hi");
  EXPECT_EQ(*c->Ext("consumerGroup"), "g");
  EXPECT_EQ(c->body, "B");
  // every truncation of it is refused
  for (size_t n = 0; n < h.size(); ++n) {
    EXPECT_FALSE(DecodeFrame(Int32((1u << 24) | static_cast<uint32_t>(n)) + h.substr(0, n)).ok())
        << n;
  }
}

TEST(QuoteBareJsonKeys, QuotesIntegerKeysOnly) {
  EXPECT_EQ(QuoteBareJsonKeys(R"({"brokerAddrs":{0:"127.0.0.1:10911",1:"x"}})"),
            R"({"brokerAddrs":{"0":"127.0.0.1:10911","1":"x"}})");
  EXPECT_EQ(QuoteBareJsonKeys(R"({ -1 : 2, "a":[1,2], "s":"{0:1}"})"),
            R"({ "-1" : 2, "a":[1,2], "s":"{0:1}"})");
  EXPECT_EQ(QuoteBareJsonKeys(R"({"e":"\"{3:4"})"), R"({"e":"\"{3:4"})");
  EXPECT_TRUE(nlohmann::json::accept(QuoteBareJsonKeys(R"({0:{1:[{2:3}]}})")));
}

}  // namespace
}  // namespace export_center::rocketmq::remoting
