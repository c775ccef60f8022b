// The broker's message store format (DecodeMessages), the property encoding,
// and the small pure helpers: NameServer address parsing, the average
// allocation, Java's String.hashCode for tag codes.

#include "rocketmq/message.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "rocketmq/allocate.h"
#include "rocketmq/client_instance.h"
#include "rocketmq/client_options.h"

namespace export_center::rocketmq {
namespace {

template <typename T>
void Put(std::string* s, T v) {
  for (int shift = (sizeof(T) - 1) * 8; shift >= 0; shift -= 8) {
    s->push_back(static_cast<char>(static_cast<uint64_t>(v) >> shift));
  }
}

struct Record {
  std::string topic = "orders";
  std::string body = "payload";
  std::map<std::string, std::string> properties = {{"TAGS", "EXPORT_TASK"}};
  int32_t queue_id = 2;
  int64_t queue_offset = 7;
  int64_t commit_log_offset = 123456;
  int32_t sys_flag = 0;
  int32_t reconsume_times = 0;
  bool v2 = false;  // magic code V2: 2-byte topic length
};

// Writes a record the way RocketMQ's CommitLog does.
std::string Encode(const Record& r) {
  std::string s;
  const std::string props = EncodeProperties(r.properties);
  Put<int32_t>(&s, 0);  // size, patched below
  Put<int32_t>(&s, r.v2 ? -626843477 : -626843481);
  Put<int32_t>(&s, 99);  // body crc
  Put<int32_t>(&s, r.queue_id);
  Put<int32_t>(&s, 0);  // flag
  Put<int64_t>(&s, r.queue_offset);
  Put<int64_t>(&s, r.commit_log_offset);
  Put<int32_t>(&s, r.sys_flag);
  Put<int64_t>(&s, 1700000000000);  // born
  s += std::string("\x0a\x00\x00\x01", 4);
  Put<int32_t>(&s, 40000);
  Put<int64_t>(&s, 1700000000123);  // stored
  s += std::string("\x7f\x00\x00\x01", 4);
  Put<int32_t>(&s, 10911);
  Put<int32_t>(&s, r.reconsume_times);
  Put<int64_t>(&s, 0);  // prepared transaction offset
  Put<int32_t>(&s, static_cast<int32_t>(r.body.size()));
  s += r.body;
  if (r.v2) {
    Put<int16_t>(&s, static_cast<int16_t>(r.topic.size()));
  } else {
    s.push_back(static_cast<char>(r.topic.size()));
  }
  s += r.topic;
  Put<int16_t>(&s, static_cast<int16_t>(props.size()));
  s += props;
  std::string size;
  Put<int32_t>(&size, static_cast<int32_t>(s.size()));
  s.replace(0, 4, size);
  return s;
}

TEST(DecodeMessages, ReadsEveryField) {
  Record r;
  r.properties["UNIQ_KEY"] = "AC1100010000ABCDEF";
  r.properties["KEYS"] = "42";
  r.properties["taskId"] = "42";
  auto decoded = DecodeMessages(Encode(r));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), 1u);
  const MessageExt& m = decoded->front();
  EXPECT_EQ(m.topic, "orders");
  EXPECT_EQ(m.stored_topic, "orders");
  EXPECT_EQ(m.body, "payload");
  EXPECT_EQ(m.tags, "EXPORT_TASK");
  EXPECT_EQ(m.keys, "42");
  EXPECT_EQ(m.queue_id, 2);
  EXPECT_EQ(m.queue_offset, 7);
  EXPECT_EQ(m.commit_log_offset, 123456);
  EXPECT_EQ(m.born_timestamp_ms, 1700000000000);
  EXPECT_EQ(m.store_timestamp_ms, 1700000000123);
  EXPECT_EQ(m.born_host, "10.0.0.1:40000");
  EXPECT_EQ(m.store_host, "127.0.0.1:10911");
  EXPECT_EQ(m.msg_id, "AC1100010000ABCDEF");
  // store ip, port, commit log offset in hex
  EXPECT_EQ(m.offset_msg_id, "7F00000100002A9F000000000001E240");
  EXPECT_EQ(*m.Property("taskId"), "42");
  EXPECT_EQ(m.UserProperties(), (std::map<std::string, std::string>{{"taskId", "42"}}));
}

TEST(DecodeMessages, RestoresTheTopicOfARetriedMessage) {
  Record r;
  r.topic = "%RETRY%workers";
  r.reconsume_times = 2;
  r.properties["RETRY_TOPIC"] = "orders";
  auto decoded = DecodeMessages(Encode(r));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->front().topic, "orders");
  EXPECT_EQ(decoded->front().stored_topic, "%RETRY%workers");
  EXPECT_EQ(decoded->front().reconsume_times, 2);
  EXPECT_EQ(decoded->front().msg_id, decoded->front().offset_msg_id) << "no UNIQ_KEY";
}

TEST(DecodeMessages, ReadsSeveralRecordsAndBothVersions) {
  Record a, b;
  b.v2 = true;
  b.topic = std::string(200, 't');
  b.queue_offset = 8;
  auto decoded = DecodeMessages(Encode(a) + Encode(b));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[1].topic, std::string(200, 't'));
  EXPECT_EQ((*decoded)[1].queue_offset, 8);
  EXPECT_TRUE(DecodeMessages("").ok());
}

TEST(DecodeMessages, InflatesZlibBodies) {
  Record r;
  const std::string plain(5000, 'x');
  uLongf size = compressBound(plain.size());
  std::string packed(size, '\0');
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(packed.data()), &size,
                     reinterpret_cast<const Bytef*>(plain.data()), plain.size()),
            Z_OK);
  packed.resize(size);
  r.body = packed;
  r.sys_flag = 0x1 | (0x3 << 8);  // compressed, zlib
  auto decoded = DecodeMessages(Encode(r));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->front().body, plain);
  EXPECT_FALSE(decoded->front().body_compressed);

  r.sys_flag = 0x1 | (0x1 << 8);  // lz4: handed over as stored
  decoded = DecodeMessages(Encode(r));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->front().body, packed);
  EXPECT_TRUE(decoded->front().body_compressed);

  r.sys_flag = 0x1;  // zlib, but the data is not
  r.body = "not zlib";
  decoded = DecodeMessages(Encode(r));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->front().body, "not zlib");
  EXPECT_TRUE(decoded->front().body_compressed);
}

TEST(DecodeMessages, RefusesEveryTruncation) {
  Record r;
  r.properties["a"] = "b";
  const std::string record = Encode(r);
  for (size_t n = 1; n < record.size(); ++n) {
    auto decoded = DecodeMessages(std::string_view(record).substr(0, n));
    EXPECT_FALSE(decoded.ok()) << n;
  }
}

TEST(DecodeMessages, RefusesBadLengthsAndMagic) {
  Record r;
  std::string record = Encode(r);
  std::string bad = record;
  bad[7] ^= 0x55;  // magic code
  EXPECT_FALSE(DecodeMessages(bad).ok());
  bad = record;
  bad[0] = '\x7f';  // size far beyond the data
  EXPECT_FALSE(DecodeMessages(bad).ok());
  bad = record;
  std::string size;
  Put<int32_t>(&size, -5);
  bad.replace(0, 4, size);
  EXPECT_FALSE(DecodeMessages(bad).ok());
  // a body length that runs past the record's own size
  bad = record;
  const size_t body_len_at = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8;
  std::string huge;
  Put<int32_t>(&huge, 1 << 30);
  bad.replace(body_len_at, 4, huge);
  EXPECT_FALSE(DecodeMessages(bad).ok());
  // a record followed by garbage
  EXPECT_FALSE(DecodeMessages(record + "xyz").ok());
}

TEST(Properties, RoundTrip) {
  std::map<std::string, std::string> p = {{"eventId", "e-1"}, {"empty", ""}, {"taskId", "9"}};
  EXPECT_EQ(DecodeProperties(EncodeProperties(p)), p);
  // the trailing separator is optional; a pair without \x01 is skipped
  EXPECT_EQ(DecodeProperties("a\x01"
                             "1\x02junk\x02"
                             "b\x01"
                             "2"),
            (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
  EXPECT_TRUE(IsReservedPropertyName("TAGS"));
  EXPECT_TRUE(IsReservedPropertyName("__RMQ.TRANSIENT.x"));
  EXPECT_FALSE(IsReservedPropertyName("taskId"));
}

TEST(ParseNamesrvAddr, SplitsAndValidates) {
  auto addrs = ParseNamesrvAddr(" ns1:9876; ns-2.local:9877 ;");
  ASSERT_TRUE(addrs.ok());
  EXPECT_EQ(*addrs, (std::vector<std::string>{"ns1:9876", "ns-2.local:9877"}));
  EXPECT_FALSE(ParseNamesrvAddr("").ok());
  EXPECT_FALSE(ParseNamesrvAddr(";;").ok());
  EXPECT_FALSE(ParseNamesrvAddr("ns1").ok());
  EXPECT_FALSE(ParseNamesrvAddr("ns1:0").ok());
  EXPECT_FALSE(ParseNamesrvAddr("ns1:70000").ok());
  EXPECT_FALSE(ParseNamesrvAddr("ns/1:9876").ok());
}

std::vector<MessageQueue> Queues(int n) {
  std::vector<MessageQueue> q;
  for (int i = 0; i < n; ++i) q.push_back({"t", "broker-a", i});
  return q;
}

std::vector<int> Ids(const std::vector<MessageQueue>& qs) {
  std::vector<int> ids;
  for (const auto& q : qs) ids.push_back(q.queue_id);
  return ids;
}

TEST(AllocateAveragely, SplitsLikeRocketMqs) {
  const std::vector<std::string> two = {"a", "b"}, three = {"a", "b", "c"};
  EXPECT_EQ(Ids(AllocateAveragely(Queues(4), two, "a")), (std::vector<int>{0, 1}));
  EXPECT_EQ(Ids(AllocateAveragely(Queues(4), two, "b")), (std::vector<int>{2, 3}));
  // 4 queues, 3 members: the first gets two
  EXPECT_EQ(Ids(AllocateAveragely(Queues(4), three, "a")), (std::vector<int>{0, 1}));
  EXPECT_EQ(Ids(AllocateAveragely(Queues(4), three, "b")), (std::vector<int>{2}));
  EXPECT_EQ(Ids(AllocateAveragely(Queues(4), three, "c")), (std::vector<int>{3}));
  // more members than queues: the last ones get nothing
  EXPECT_EQ(Ids(AllocateAveragely(Queues(1), three, "a")), (std::vector<int>{0}));
  EXPECT_TRUE(AllocateAveragely(Queues(1), three, "b").empty());
  EXPECT_TRUE(AllocateAveragely(Queues(4), two, "stranger").empty());
  // every queue has exactly one owner for any member count
  for (int members = 1; members <= 9; ++members) {
    std::vector<std::string> ids;
    for (int i = 0; i < members; ++i) ids.push_back("c" + std::to_string(i));
    std::map<int, int> owners;
    for (const auto& id : ids) {
      for (int q : Ids(AllocateAveragely(Queues(8), ids, id))) owners[q]++;
    }
    ASSERT_EQ(owners.size(), 8u) << members;
    for (auto [q, n] : owners) EXPECT_EQ(n, 1) << q;
  }
}

TEST(JavaStringHash, MatchesJava) {
  EXPECT_EQ(JavaStringHash(""), 0);
  EXPECT_EQ(JavaStringHash("TagA"), 2598919);
  EXPECT_EQ(JavaStringHash("EXPORT_TASK"), 87723824);
  EXPECT_EQ(JavaStringHash("\xc3\xa9"), 233);              // é, one UTF-16 unit
  EXPECT_EQ(JavaStringHash("\xf0\x9f\x98\x80"), 1772899);  // U+1F600, a surrogate pair
  EXPECT_EQ(ParseTagExpression(" A || B ||A"), (std::vector<std::string>{"A", "B"}));
  EXPECT_TRUE(ParseTagExpression("*").empty());
}

}  // namespace
}  // namespace export_center::rocketmq
