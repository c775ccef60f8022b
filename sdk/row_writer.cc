#include "sdk/row_writer.h"

namespace export_center::sdk {
namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 when it is invalid
// (overlong forms, surrogates and code points past U+10FFFF included).
size_t Utf8Sequence(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

void AppendJsonString(std::string* out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      // A run of plain ASCII goes in one append.
      size_t end = i + 1;
      while (end < text.size()) {
        const unsigned char d = static_cast<unsigned char>(text[end]);
        if (d < 0x20 || d >= 0x80 || d == '"' || d == '\\') break;
        ++end;
      }
      out->append(text.data() + i, end - i);
      i = end;
      continue;
    }
    if (c >= 0x80) {
      const size_t n = Utf8Sequence(text, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD for the invalid byte
        ++i;
      } else {
        out->append(text.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
    }
    ++i;
  }
  out->push_back('"');
}

RowWriter::RowWriter(const std::vector<Column>& columns) {
  for (const auto& column : columns) {
    std::string key;
    AppendJsonString(&key, column.key);
    key.push_back(':');
    keys_.push_back(std::move(key));
  }
  out_.push_back('[');
}

RowWriter& RowWriter::Row() {
  if (rows_ > 0) {
    if (!error_) error_ = CellCountError();
    out_.append("},{");
  } else {
    out_.push_back('{');
  }
  ++rows_;
  cells_ = 0;
  return *this;
}

std::optional<std::string> RowWriter::CellCountError() const {
  if (cells_ == keys_.size()) return std::nullopt;
  return "row " + std::to_string(rows_) + " has " + std::to_string(cells_) + " cells for " +
         std::to_string(keys_.size()) + " columns";
}

void RowWriter::Key() {
  if (rows_ == 0 && !error_) error_ = "a cell was written before Row()";
  if (cells_ >= keys_.size()) {
    ++cells_;  // counted, so that the error names the row
    out_.append(cells_ > 1 ? ",\"\":" : "\"\":");
    return;
  }
  if (cells_ > 0) out_.push_back(',');
  out_.append(keys_[cells_++]);
}

RowWriter& RowWriter::Null() {
  Key();
  out_.append("null");
  return *this;
}

RowWriter& RowWriter::String(std::string_view text) {
  Key();
  AppendJsonString(&out_, text);
  return *this;
}

RowWriter& RowWriter::String(const std::optional<std::string>& text) {
  return text ? String(std::string_view(*text)) : Null();
}

RowWriter& RowWriter::Integer(int64_t value) {
  Key();
  out_.push_back('"');
  out_.append(std::to_string(value));
  out_.push_back('"');
  return *this;
}

RowWriter& RowWriter::Boolean(bool value) {
  Key();
  out_.append(value ? "true" : "false");
  return *this;
}

RowWriter& RowWriter::Decimal(int64_t unscaled, int scale) {
  Key();
  out_.push_back('"');
  AppendDecimalText(&out_, unscaled, scale);
  out_.push_back('"');
  return *this;
}

RowWriter& RowWriter::Date(int year, int month, int day) {
  Key();
  out_.push_back('"');
  AppendDateText(&out_, year, month, day);
  out_.push_back('"');
  return *this;
}

RowWriter& RowWriter::DateTime(int64_t epoch_ms) {
  Key();
  out_.push_back('"');
  AppendDateTimeText(&out_, epoch_ms);
  out_.push_back('"');
  return *this;
}

RowWriter& RowWriter::DateTime(const std::optional<int64_t>& epoch_ms) {
  return epoch_ms ? DateTime(*epoch_ms) : Null();
}

std::optional<std::string> RowWriter::error() const {
  if (error_ || rows_ == 0) return error_;
  return CellCountError();
}

void RowWriter::AppendJson(std::string* out) const {
  out->reserve(out->size() + out_.size() + 2);
  out->append(out_);
  if (rows_ > 0) out->push_back('}');
  out->push_back(']');
}

}  // namespace export_center::sdk
