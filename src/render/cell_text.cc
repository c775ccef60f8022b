#include "render/cell_text.h"

#include <chrono>
#include <cstring>
#include <limits>

namespace export_center::render::internal {
namespace {

// U+FFFE and U+FFFF are valid UTF-8 but not XML 1.0 characters.
bool IsNonCharacter(std::string_view s, size_t i) {
  return s[i] == '\xEF' && s[i + 1] == '\xBF' && (s[i + 2] == '\xBE' || s[i + 2] == '\xBF');
}

bool IsAllowedControl(unsigned char c) { return c == '\t' || c == '\n' || c == '\r'; }

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void AppendDigits(int64_t v, int width, std::string* out) {
  char buf[24];
  int n = 0;
  const bool negative = v < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    buf[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  while (n < width) buf[n++] = '0';
  if (negative) out->push_back('-');
  while (n > 0) out->push_back(buf[--n]);
}

}  // namespace

size_t CleanPrefixLength(std::string_view text) {
  constexpr uint64_t k20 = 0x2020202020202020ULL;
  constexpr uint64_t k80 = 0x8080808080808080ULL;
  size_t i = 0;
  while (i < text.size()) {
    // Eight bytes at a time while they are all in 0x20..0x7F (SWAR: a byte
    // below 0x20 borrows into its top bit, a byte above 0x7F has it set).
    if (i + 8 <= text.size()) {
      uint64_t w;
      std::memcpy(&w, text.data() + i, 8);
      if ((((w - k20) | w) & k80) == 0) {
        i += 8;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c <= 0x7F) {
      ++i;  // DEL is allowed in XML 1.0
    } else if (c < 0x20) {
      if (!IsAllowedControl(c)) break;
      ++i;
    } else {
      const size_t n = CleanSequenceLength(text, i);
      if (n == 0) break;
      i += n;
    }
  }
  return i;
}

std::string_view CleanText(std::string_view text, std::string* scratch) {
  // Fast scan: most cells are clean and are returned without a copy.
  size_t i = CleanPrefixLength(text);
  if (i == text.size()) return text;
  scratch->assign(text.substr(0, i));
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c >= 0x20 || IsAllowedControl(c)) scratch->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const size_t n = utf8::SequenceLength(text, i);
    if (n == 0) {
      scratch->append(utf8::kReplacement);
      ++i;
    } else {
      if (!(n == 3 && IsNonCharacter(text, i))) scratch->append(text.substr(i, n));
      i += n;
    }
  }
  return *scratch;
}

bool NeedsFormulaGuard(std::string_view text) {
  if (text.empty()) return false;
  switch (text[0]) {
    case '=':
    case '+':
    case '-':
    case '@':
    case '\t':
    case '\r':
      return true;
    default:
      return false;
  }
}

void AppendIsoDate(int64_t days, std::string* out) {
  int64_t y;
  int m, d;
  civil::DaysToYmd(days, &y, &m, &d);
  AppendDigits(y, 4, out);
  out->push_back('-');
  AppendDigits(m, 2, out);
  out->push_back('-');
  AppendDigits(d, 2, out);
}

void AppendIsoDateTime(int64_t days, int64_t ms_of_day, std::string* out) {
  AppendIsoDate(days, out);
  const int64_t s = ms_of_day / 1000;
  out->push_back(' ');
  AppendDigits(s / 3600, 2, out);
  out->push_back(':');
  AppendDigits(s / 60 % 60, 2, out);
  out->push_back(':');
  AppendDigits(s % 60, 2, out);
}

Status LocalClock::Init(const std::string& zone_name) {
  if (!cctz::load_time_zone(zone_name, &zone_)) {
    return InvalidArgument("unknown time zone \"" + zone_name + "\"");
  }
  valid_from_s_ = 1;
  valid_until_s_ = 0;
  return Status::Ok();
}

void LocalClock::Split(int64_t epoch_ms, int64_t* days, int64_t* ms_of_day) {
  const int64_t epoch_s = FloorDiv(epoch_ms, 1000);
  if (epoch_s < valid_from_s_ || epoch_s >= valid_until_s_) Refresh(epoch_s);
  const int64_t local_ms = epoch_ms + offset_s_ * 1000;
  *days = FloorDiv(local_ms, 86400000);
  *ms_of_day = local_ms - *days * 86400000;
}

void LocalClock::Refresh(int64_t epoch_s) {
  using Seconds = cctz::time_point<cctz::seconds>;
  const Seconds epoch =
      std::chrono::time_point_cast<cctz::seconds>(std::chrono::system_clock::from_time_t(0));
  const Seconds tp = epoch + cctz::seconds(epoch_s);
  offset_s_ = zone_.lookup(tp).offset;
  // The offset holds from the previous transition up to the next one.
  valid_from_s_ = std::numeric_limits<int64_t>::min();
  valid_until_s_ = std::numeric_limits<int64_t>::max();
  cctz::time_zone::civil_transition t;
  if (zone_.next_transition(tp, &t)) {
    valid_until_s_ = (zone_.lookup(t.to).trans - epoch).count();
  }
  if (zone_.prev_transition(tp + cctz::seconds(1), &t)) {
    valid_from_s_ = (zone_.lookup(t.to).trans - epoch).count();
  }
  // cctz leaves distant transitions unspecified: never trust a range that
  // does not contain the instant itself.
  if (epoch_s < valid_from_s_ || epoch_s >= valid_until_s_) {
    valid_from_s_ = epoch_s;
    valid_until_s_ = epoch_s + 1;
  }
}

}  // namespace export_center::render::internal
