#pragma once
// RemotingCommand: one frame of RocketMQ's Remoting protocol, and its codec.
//
// A frame on the wire (docs/rocketmq.md#frames), all integers big-endian:
//
//   int32  length         bytes that follow (4 + header length + body length)
//   int32  header tag     serialize type << 24 | header length (24 bits)
//   header                JSON (type 0) or RocketMQ's binary layout (type 1)
//   body                  the rest, opaque bytes
//
// The JSON header holds code, language, version, opaque (the request id a
// response echoes), flag (bit 0 response, bit 1 one-way), remark and
// extFields (the request/response "custom header" as string pairs). This
// client sends JSON headers; it reads both kinds (a broker answers in the
// request's kind). Codecs are pure functions: thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace export_center::rocketmq::remoting {

// The protocol version this client announces: RocketMQ 4.9.4's
// (MQVersion.Version.V4_9_4.ordinal()). Brokers gate a few header fields on
// it (e.g. CONSUMER_SEND_MSG_BACK's maxReconsumeTimes needs >= 3.4.9).
inline constexpr int kClientVersion = 401;
// Frames longer than this are refused (RocketMQ's own default frame limit).
inline constexpr uint32_t kMaxFrameLength = 16 * 1024 * 1024;

inline constexpr int kFlagResponse = 1 << 0;
inline constexpr int kFlagOneway = 1 << 1;

struct RemotingCommand {
  int code = 0;
  std::string language = "CPP";
  int version = kClientVersion;
  int32_t opaque = 0;
  int flag = 0;
  std::string remark;
  std::map<std::string, std::string> ext_fields;
  std::string body;

  bool is_response() const { return (flag & kFlagResponse) != 0; }
  bool is_oneway() const { return (flag & kFlagOneway) != 0; }

  static RemotingCommand Request(int code) {
    RemotingCommand c;
    c.code = code;
    return c;
  }
  // A response to `request` (same opaque) with `code`.
  static RemotingCommand ResponseTo(const RemotingCommand& request, int code, std::string remark);

  RemotingCommand& Set(const std::string& key, std::string value) {
    ext_fields[key] = std::move(value);
    return *this;
  }
  RemotingCommand& Set(const std::string& key, const char* value) {
    return Set(key, std::string(value));
  }
  RemotingCommand& Set(const std::string& key, int64_t value) {
    return Set(key, std::to_string(value));
  }
  RemotingCommand& Set(const std::string& key, int value) {
    return Set(key, static_cast<int64_t>(value));
  }
  RemotingCommand& Set(const std::string& key, bool value) {
    return Set(key, std::string(value ? "true" : "false"));
  }

  // The ext field `key`, or nullptr.
  const std::string* Ext(const std::string& key) const;
  // The ext field `key` as an integer; InvalidArgument when absent or not one.
  StatusOr<int64_t> ExtInt(const std::string& key) const;
  // "code=17 remark=..." for error messages.
  std::string Describe() const;
};

// The whole frame, length prefix included, with a JSON header.
std::string EncodeFrame(const RemotingCommand& command);

// Decodes one frame given WITHOUT its 4-byte length prefix. InvalidArgument,
// never a crash, when it is malformed.
StatusOr<RemotingCommand> DecodeFrame(std::string_view frame);

// Splits a byte stream into frames. Append() what the socket delivered, then
// call Next() until it returns nullopt. A bad length (over kMaxFrameLength or
// too small to hold a header tag) is an error after which the stream is
// unusable (the connection must be closed). Not thread-safe.
class FrameReader {
 public:
  void Append(std::string_view bytes) { buffer_.append(bytes); }
  StatusOr<std::optional<RemotingCommand>> Next();
  size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  std::string buffer_;
  size_t consumed_ = 0;
};

// RocketMQ's servers serialize bodies with fastjson, which writes maps with
// integer keys unquoted ({0:"127.0.0.1:10911"}); that is not JSON. Returns
// `text` with such keys quoted, everything else unchanged.
std::string QuoteBareJsonKeys(std::string_view text);

}  // namespace export_center::rocketmq::remoting
