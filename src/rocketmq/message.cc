#include "rocketmq/message.h"

#include <zlib.h>

#include <array>
#include <cstdio>
#include <set>

#include "common/encoding.h"

namespace export_center::rocketmq {
namespace {

// RocketMQ's store format (docs/rocketmq.md#messages): magic codes of the
// two message versions (V2 has a 2-byte topic length).
constexpr int32_t kMagicV1 = -626843481;
constexpr int32_t kMagicV2 = -626843477;

// MessageSysFlag bits.
constexpr int32_t kCompressedFlag = 0x1;
constexpr int32_t kBornHostV6Flag = 0x1 << 4;
constexpr int32_t kStoreHostV6Flag = 0x1 << 5;
constexpr int32_t kCompressionTypeMask = 0x7 << 8;
constexpr int32_t kCompressionZlib = 0x3 << 8;  // 0 (legacy) means zlib too

constexpr char kNameValueSeparator = '\x01';
constexpr char kPropertySeparator = '\x02';

// A bounded reader: every read checks what is left, so a bad length can only
// end decoding with an error.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Bytes(size_t n, std::string_view* out) {
    if (data_.size() - pos_ < n) return false;
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  template <typename T>
  bool Int(T* out) {
    std::string_view b;
    if (!Bytes(sizeof(T), &b)) return false;
    uint64_t v = 0;
    for (char c : b) v = (v << 8) | static_cast<unsigned char>(c);
    *out = static_cast<T>(v);
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

std::string HostToString(std::string_view ip, int32_t port) {
  char buf[64];
  if (ip.size() == 4) {
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u:%d", static_cast<unsigned char>(ip[0]),
                  static_cast<unsigned char>(ip[1]), static_cast<unsigned char>(ip[2]),
                  static_cast<unsigned char>(ip[3]), port);
    return buf;
  }
  std::string s = "[";
  for (size_t i = 0; i < ip.size(); i += 2) {
    std::snprintf(buf, sizeof buf, "%s%x", i ? ":" : "",
                  (static_cast<unsigned char>(ip[i]) << 8) | static_cast<unsigned char>(ip[i + 1]));
    s += buf;
  }
  return s + "]:" + std::to_string(port);
}

// Inflates zlib data; false when it is not valid zlib or inflates beyond
// `limit` bytes (a bomb in a pulled message must not exhaust memory).
bool Inflate(std::string_view in, std::string* out, size_t limit) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return false;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::array<char, 16384> chunk;
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_out = chunk.size();
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out->append(chunk.data(), chunk.size() - zs.avail_out);
    if (out->size() > limit) {
      rc = Z_MEM_ERROR;
      break;
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      rc = Z_DATA_ERROR;  // truncated stream
    }
  }
  inflateEnd(&zs);
  return rc == Z_STREAM_END;
}

constexpr size_t kMaxInflatedBody = 64 * 1024 * 1024;

// Decodes one record that starts at the reader's position.
Status DecodeOne(Reader& in, MessageExt* m) {
  auto truncated = [&](const char* field) {
    return InvalidArgument(std::string("message record truncated at ") + field);
  };
  int32_t store_size = 0, magic = 0, flag = 0;
  if (!in.Int(&store_size)) return truncated("size");
  if (!in.Int(&magic)) return truncated("magic code");
  if (magic != kMagicV1 && magic != kMagicV2) {
    return InvalidArgument("message record has an unknown magic code " + std::to_string(magic));
  }
  if (!in.Int(&m->body_crc) || !in.Int(&m->queue_id) || !in.Int(&flag) ||
      !in.Int(&m->queue_offset) || !in.Int(&m->commit_log_offset) || !in.Int(&m->sys_flag) ||
      !in.Int(&m->born_timestamp_ms)) {
    return truncated("fixed fields");
  }
  std::string_view born_ip, store_ip;
  int32_t born_port = 0, store_port = 0;
  if (!in.Bytes((m->sys_flag & kBornHostV6Flag) ? 16 : 4, &born_ip) || !in.Int(&born_port) ||
      !in.Int(&m->store_timestamp_ms) ||
      !in.Bytes((m->sys_flag & kStoreHostV6Flag) ? 16 : 4, &store_ip) || !in.Int(&store_port)) {
    return truncated("hosts");
  }
  m->born_host = HostToString(born_ip, born_port);
  m->store_host = HostToString(store_ip, store_port);
  int64_t prepared_transaction_offset = 0;
  int32_t body_length = 0;
  if (!in.Int(&m->reconsume_times) || !in.Int(&prepared_transaction_offset) ||
      !in.Int(&body_length)) {
    return truncated("reconsume times");
  }
  std::string_view body;
  if (body_length < 0 || !in.Bytes(static_cast<size_t>(body_length), &body)) {
    return truncated("body");
  }
  uint16_t topic_length = 0;
  if (magic == kMagicV1) {
    uint8_t len8 = 0;
    if (!in.Int(&len8)) return truncated("topic length");
    topic_length = len8;
  } else if (!in.Int(&topic_length)) {
    return truncated("topic length");
  }
  std::string_view topic, properties;
  uint16_t properties_length = 0;
  if (!in.Bytes(topic_length, &topic)) return truncated("topic");
  if (!in.Int(&properties_length) || !in.Bytes(properties_length, &properties)) {
    return truncated("properties");
  }
  m->stored_topic = std::string(topic);
  m->properties = DecodeProperties(properties);

  m->body = std::string(body);
  if (m->sys_flag & kCompressedFlag) {
    const int32_t type = m->sys_flag & kCompressionTypeMask;
    std::string inflated;
    if ((type == 0 || type == kCompressionZlib) && Inflate(body, &inflated, kMaxInflatedBody)) {
      m->body = std::move(inflated);
      m->sys_flag &= ~kCompressedFlag;
    } else {
      m->body_compressed = true;  // lz4/zstd or corrupt: handed over as stored
    }
  }

  // The offset message id: store host ip, port (4 bytes), commit log offset.
  std::string id(store_ip);
  for (int shift = 24; shift >= 0; shift -= 8) id.push_back(static_cast<char>(store_port >> shift));
  for (int shift = 56; shift >= 0; shift -= 8) {
    id.push_back(static_cast<char>(m->commit_log_offset >> shift));
  }
  m->offset_msg_id = HexEncodeUpper(id);
  const std::string* uniq = m->Property("UNIQ_KEY");
  m->msg_id = uniq != nullptr && !uniq->empty() ? *uniq : m->offset_msg_id;
  const std::string* retry_topic = m->Property("RETRY_TOPIC");
  m->topic =
      retry_topic != nullptr && !retry_topic->empty() && m->stored_topic.rfind("%RETRY%", 0) == 0
          ? *retry_topic
          : m->stored_topic;
  if (const std::string* tags = m->Property("TAGS")) m->tags = *tags;
  if (const std::string* keys = m->Property("KEYS")) m->keys = *keys;
  return Status::Ok();
}

}  // namespace

std::string MessageQueue::ToString() const {
  return topic + "@" + broker_name + "#" + std::to_string(queue_id);
}

const std::string* MessageExt::Property(const std::string& name) const {
  auto it = properties.find(name);
  return it == properties.end() ? nullptr : &it->second;
}

std::map<std::string, std::string> MessageExt::UserProperties() const {
  std::map<std::string, std::string> user;
  for (const auto& [name, value] : properties) {
    if (!IsReservedPropertyName(name)) user.emplace(name, value);
  }
  return user;
}

bool IsReservedPropertyName(std::string_view name) {
  // MessageConst's property names (RocketMQ 5.3), plus its transient prefix.
  static const std::set<std::string_view> kReserved = {
      "KEYS",
      "TAGS",
      "WAIT",
      "DELAY",
      "RETRY_TOPIC",
      "REAL_TOPIC",
      "REAL_QID",
      "TRAN_MSG",
      "PGROUP",
      "MIN_OFFSET",
      "MAX_OFFSET",
      "BUYER_ID",
      "ORIGIN_MESSAGE_ID",
      "TRANSFER_FLAG",
      "CORRECTION_FLAG",
      "RECONSUME_TIME",
      "MSG_REGION",
      "TRACE_ON",
      "UNIQ_KEY",
      "EXTEND_UNIQ_INFO",
      "MAX_RECONSUME_TIMES",
      "CONSUME_START_TIME",
      "INNER_NUM",
      "INNER_BASE",
      "CHECK_IMMUNITY_TIME_IN_SECONDS",
      "TRAN_PREPARED_QUEUE_OFFSET",
      "__transactionId__",
      "TRANSACTION_CHECK_TIMES",
      "INSTANCE_ID",
      "CORRELATION_ID",
      "REPLY_TO_CLIENT",
      "TTL",
      "ARRIVE_TIME",
      "PUSH_REPLY_TIME",
      "CLUSTER",
      "MSG_TYPE",
      "POP_CK",
      "POP_CK_OFFSET",
      "1ST_POP_TIME",
      "__SHARDINGKEY",
      "PROPERTY_FORWARD_QUEUE_ID",
      "REDIRECT",
      "INNER_MULTI_DISPATCH",
      "INNER_MULTI_QUEUE_OFFSET",
      "TRACE_CONTEXT",
      "TIMER_DELAY_SEC",
      "TIMER_DELIVER_MS",
      "__BORNHOST",
      "BORN_TIMESTAMP",
      "TIMER_ENQUEUE_MS",
      "TIMER_DEQUEUE_MS",
      "TIMER_ROLL_TIMES",
      "TIMER_OUT_MS",
      "TIMER_DEL_UNIQKEY",
      "TIMER_DELAY_LEVEL",
      "TIMER_DELAY_MS",
      "DLQ_ORIGIN_TOPIC",
      "DLQ_ORIGIN_MESSAGE_ID",
  };
  return kReserved.count(name) > 0 || name.rfind("__RMQ.TRANSIENT.", 0) == 0;
}

std::string EncodeProperties(const std::map<std::string, std::string>& properties) {
  std::string s;
  for (const auto& [name, value] : properties) {
    s += name;
    s.push_back(kNameValueSeparator);
    s += value;
    s.push_back(kPropertySeparator);
  }
  return s;
}

std::map<std::string, std::string> DecodeProperties(std::string_view text) {
  std::map<std::string, std::string> properties;
  while (!text.empty()) {
    const size_t end = text.find(kPropertySeparator);
    std::string_view pair = text.substr(0, end);
    const size_t sep = pair.find(kNameValueSeparator);
    if (sep != std::string_view::npos) {
      properties[std::string(pair.substr(0, sep))] = std::string(pair.substr(sep + 1));
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return properties;
}

StatusOr<std::vector<MessageExt>> DecodeMessages(std::string_view body) {
  std::vector<MessageExt> messages;
  size_t pos = 0;
  while (pos < body.size()) {
    Reader size_reader(body.substr(pos));
    int32_t store_size = 0;
    if (!size_reader.Int(&store_size)) {
      return InvalidArgument("message record truncated at size (offset " + std::to_string(pos) +
                             ")");
    }
    if (store_size < 4 || static_cast<size_t>(store_size) > body.size() - pos) {
      return InvalidArgument("message record at offset " + std::to_string(pos) +
                             " has a bad size " + std::to_string(store_size));
    }
    // Each record is decoded within its own declared size.
    Reader in(body.substr(pos, static_cast<size_t>(store_size)));
    MessageExt m;
    Status s = DecodeOne(in, &m);
    if (!s.ok()) return s.WithContext("record at offset " + std::to_string(pos));
    messages.push_back(std::move(m));
    pos += static_cast<size_t>(store_size);
  }
  return messages;
}

}  // namespace export_center::rocketmq
