// libFuzzer target for everything that reads bytes from a RocketMQ server:
// the frame reader and header decoder, the message store decoder
// (DecodeMessages) and the NameServer body parsers. The input is treated as
// a byte stream (split in two reads), as a frame without its length prefix,
// and as a pull body; every frame found is decoded further. Nothing may
// crash, leak or read out of bounds; errors are fine.
//
// Its seed corpus (corpus/rocketmq_decode_fuzzer/) holds real frames captured
// from the test broker (client_test.cc); built and run by scripts/fuzz.sh
// (docs/fuzzing.md).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rocketmq/message.h"
#include "rocketmq/remoting/remoting_command.h"
#include "rocketmq/route_data.h"

namespace {

using export_center::rocketmq::DecodeMessages;
using export_center::rocketmq::ParseClusterInfo;
using export_center::rocketmq::ParseTopicRoute;
using export_center::rocketmq::remoting::DecodeFrame;
using export_center::rocketmq::remoting::FrameReader;
using export_center::rocketmq::remoting::RemotingCommand;

void DecodeBody(std::string_view body) {
  (void)DecodeMessages(body);
  (void)ParseTopicRoute(body);
  (void)ParseClusterInfo(body);
}

void Drain(FrameReader& reader) {
  while (true) {
    auto next = reader.Next();
    if (!next.ok() || !next->has_value()) return;
    const RemotingCommand& frame = **next;
    (void)frame.ExtInt("nextBeginOffset");
    DecodeBody(frame.body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t split = size == 0 ? 0 : data[size - 1] % (size + 1);
  FrameReader reader;
  reader.Append(in.substr(0, split));
  Drain(reader);
  reader.Append(in.substr(split));
  Drain(reader);
  if (auto frame = DecodeFrame(in.size() >= 4 ? in.substr(4) : in); frame.ok()) {
    DecodeBody(frame->body);
  }
  DecodeBody(in);
  return 0;
}
