#include "rocketmq/remoting/remoting_command.h"

#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

#include "common/nesting.h"

namespace export_center::rocketmq::remoting {
namespace {

constexpr int kSerializeJson = 0;
constexpr int kSerializeRocketMq = 1;

void PutInt32(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>(v >> 24));
  out->push_back(static_cast<char>(v >> 16));
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}

// Reads big-endian integers from a bounded view; every read is checked.
class Cursor {
 public:
  explicit Cursor(std::string_view data) : data_(data) {}
  bool Read(size_t n, std::string_view* out) {
    if (data_.size() - pos_ < n) return false;
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  template <typename T>
  bool ReadInt(T* out) {
    std::string_view bytes;
    if (!Read(sizeof(T), &bytes)) return false;
    uint64_t v = 0;
    for (char c : bytes) v = (v << 8) | static_cast<unsigned char>(c);
    *out = static_cast<T>(v);
    return true;
  }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

std::string JsonScalarToString(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

StatusOr<RemotingCommand> DecodeJsonHeader(std::string_view header) {
  // Nested past kMaxNesting: refused before a tree exists (common/nesting.h).
  auto parsed = ParseJsonWithin<nlohmann::json>(header);
  if (!parsed.ok()) return parsed.status().WithContext("remoting header");
  nlohmann::json j = std::move(parsed).value();
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("remoting header is not a JSON object");
  }
  RemotingCommand c;
  auto integer = [&](const char* key, auto* out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return Status::Ok();
    if (!it->is_number_integer()) return InvalidArgument(std::string("remoting header ") + key);
    *out = it->get<std::remove_pointer_t<decltype(out)>>();
    return Status::Ok();
  };
  EC_RETURN_IF_ERROR(integer("code", &c.code));
  EC_RETURN_IF_ERROR(integer("version", &c.version));
  EC_RETURN_IF_ERROR(integer("opaque", &c.opaque));
  EC_RETURN_IF_ERROR(integer("flag", &c.flag));
  if (auto it = j.find("language"); it != j.end() && it->is_string()) {
    c.language = it->get<std::string>();
  }
  if (auto it = j.find("remark"); it != j.end() && it->is_string()) {
    c.remark = it->get<std::string>();
  }
  if (auto it = j.find("extFields"); it != j.end() && it->is_object()) {
    for (const auto& [key, value] : it->items()) c.ext_fields[key] = JsonScalarToString(value);
  }
  return c;
}

// RocketMQSerializable: code(2) language(1) version(2) opaque(4) flag(4)
// remark(len 4 + bytes) extFields(len 4 + [key len 2 + key, value len 4 + value]...)
StatusOr<RemotingCommand> DecodeBinaryHeader(std::string_view header) {
  static constexpr const char* kLanguages[] = {"JAVA",   "CPP",  "DOTNET", "PYTHON", "DELPHI",
                                               "ERLANG", "RUBY", "OTHER",  "HTTP",   "GO",
                                               "PHP",    "OMS",  "RUST",   "NODE_JS"};
  Cursor in(header);
  RemotingCommand c;
  int16_t code = 0, version = 0;
  uint8_t language = 0;
  int32_t opaque = 0, flag = 0;
  uint32_t remark_len = 0, ext_len = 0;
  std::string_view remark, ext;
  if (!in.ReadInt(&code) || !in.ReadInt(&language) || !in.ReadInt(&version) ||
      !in.ReadInt(&opaque) || !in.ReadInt(&flag) || !in.ReadInt(&remark_len) ||
      !in.Read(remark_len, &remark) || !in.ReadInt(&ext_len) || !in.Read(ext_len, &ext)) {
    return InvalidArgument("truncated binary remoting header");
  }
  c.code = code;
  c.version = version;
  c.opaque = opaque;
  c.flag = flag;
  c.language = language < std::size(kLanguages) ? kLanguages[language] : "OTHER";
  c.remark = std::string(remark);
  Cursor fields(ext);
  while (fields.remaining() > 0) {
    uint16_t key_len = 0;
    uint32_t value_len = 0;
    std::string_view key, value;
    if (!fields.ReadInt(&key_len) || !fields.Read(key_len, &key) || !fields.ReadInt(&value_len) ||
        !fields.Read(value_len, &value)) {
      return InvalidArgument("truncated extFields in binary remoting header");
    }
    c.ext_fields[std::string(key)] = std::string(value);
  }
  return c;
}

}  // namespace

RemotingCommand RemotingCommand::ResponseTo(const RemotingCommand& request, int code,
                                            std::string remark) {
  RemotingCommand c;
  c.code = code;
  c.opaque = request.opaque;
  c.flag = kFlagResponse;
  c.remark = std::move(remark);
  return c;
}

const std::string* RemotingCommand::Ext(const std::string& key) const {
  auto it = ext_fields.find(key);
  return it == ext_fields.end() ? nullptr : &it->second;
}

StatusOr<int64_t> RemotingCommand::ExtInt(const std::string& key) const {
  const std::string* text = Ext(key);
  if (text == nullptr) return InvalidArgument("response lacks " + key);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) {
    return InvalidArgument("response field " + key + " is not an integer: " + *text);
  }
  return v;
}

std::string RemotingCommand::Describe() const {
  std::string s = "code=" + std::to_string(code);
  if (!remark.empty()) s += " remark=" + remark;
  return s;
}

std::string EncodeFrame(const RemotingCommand& command) {
  nlohmann::json header = {
      {"code", command.code},       {"language", command.language},
      {"version", command.version}, {"opaque", command.opaque},
      {"flag", command.flag},       {"serializeTypeCurrentRPC", "JSON"},
  };
  if (!command.remark.empty()) header["remark"] = command.remark;
  header["extFields"] = nlohmann::json::object();
  for (const auto& [key, value] : command.ext_fields) header["extFields"][key] = value;
  // Replace, not throw, on invalid UTF-8 in a remark or field.
  const std::string header_text =
      header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string frame;
  frame.reserve(8 + header_text.size() + command.body.size());
  PutInt32(&frame, static_cast<uint32_t>(4 + header_text.size() + command.body.size()));
  PutInt32(&frame, (kSerializeJson << 24) | static_cast<uint32_t>(header_text.size()));
  frame += header_text;
  frame += command.body;
  return frame;
}

StatusOr<RemotingCommand> DecodeFrame(std::string_view frame) {
  Cursor in(frame);
  uint32_t tag = 0;
  if (!in.ReadInt(&tag)) return InvalidArgument("remoting frame shorter than its header tag");
  const int serialize_type = static_cast<int>(tag >> 24);
  const uint32_t header_length = tag & 0xFFFFFF;
  std::string_view header;
  if (!in.Read(header_length, &header)) {
    return InvalidArgument("remoting header length " + std::to_string(header_length) +
                           " exceeds the frame");
  }
  StatusOr<RemotingCommand> command = InvalidArgument("");
  if (serialize_type == kSerializeJson) {
    command = DecodeJsonHeader(header);
  } else if (serialize_type == kSerializeRocketMq) {
    command = DecodeBinaryHeader(header);
  } else {
    return InvalidArgument("unknown remoting serialize type " + std::to_string(serialize_type));
  }
  if (!command.ok()) return command.status();
  std::string_view body;
  (void)in.Read(in.remaining(), &body);
  command->body = std::string(body);
  return command;
}

StatusOr<std::optional<RemotingCommand>> FrameReader::Next() {
  std::string_view pending(buffer_);
  pending.remove_prefix(consumed_);
  if (pending.size() < 4) {
    // Compact now and then, so a long-lived stream does not grow forever.
    if (consumed_ > 0) {
      buffer_.erase(0, consumed_);
      consumed_ = 0;
    }
    return std::optional<RemotingCommand>();
  }
  uint32_t length = 0;
  Cursor(pending).ReadInt(&length);
  if (length < 4 || length > kMaxFrameLength) {
    return InvalidArgument("bad remoting frame length " + std::to_string(length));
  }
  if (pending.size() - 4 < length) return std::optional<RemotingCommand>();
  StatusOr<RemotingCommand> command = DecodeFrame(pending.substr(4, length));
  consumed_ += 4 + length;
  if (!command.ok()) return command.status();
  return std::optional<RemotingCommand>(std::move(command).value());
}

std::string QuoteBareJsonKeys(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  bool after_open = false;  // just after '{' or ',' (outside strings): a key may follow
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (after_open && (c == '-' || std::isdigit(static_cast<unsigned char>(c)))) {
      size_t end = i + 1;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      size_t colon = end;
      while (colon < text.size() && std::isspace(static_cast<unsigned char>(text[colon]))) ++colon;
      if (colon < text.size() && text[colon] == ':') {
        out.push_back('"');
        out.append(text.substr(i, end - i));
        out.push_back('"');
        i = end - 1;
        after_open = false;
        continue;
      }
    }
    out.push_back(c);
    if (c == '"') {
      in_string = true;
      after_open = false;
    } else if (c == '{' || c == ',') {
      after_open = true;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      after_open = false;
    }
  }
  return out;
}

}  // namespace export_center::rocketmq::remoting
