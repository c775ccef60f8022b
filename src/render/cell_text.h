#pragma once
// Helpers shared by the XLSX and CSV writers: text cleaning, truncation,
// civil dates and the export time zone. Internal to render/.

#include <cctz/time_zone.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/civil_day.h"
#include "common/status.h"
#include "common/utf8.h"

namespace export_center::render::internal {

// Excel's cell limit, counted in UTF-16 units as Excel counts.
constexpr size_t kMaxCellUnits = 32767;

// Like utf8::SequenceLength, but also 0 for U+FFFE and U+FFFF, which are
// valid UTF-8 yet not XML 1.0 characters: the length of a sequence CleanText
// keeps as is.
inline size_t CleanSequenceLength(std::string_view s, size_t i) {
  const size_t n = utf8::SequenceLength(s, i);
  if (n == 3 && s[i] == '\xEF' && s[i + 1] == '\xBF' &&
      (s[i + 2] == '\xBE' || s[i + 2] == '\xBF')) {
    return 0;
  }
  return n;
}

// Returns `text` as valid UTF-8 with the characters XML 1.0 forbids removed
// (C0 controls other than \t \n \r, U+FFFE, U+FFFF) and each invalid UTF-8
// sequence replaced by U+FFFD. Returns `text` itself when it is already clean
// (the common case, no copy); otherwise the result lives in `*scratch`.
std::string_view CleanText(std::string_view text, std::string* scratch);

// The length of the longest prefix of `text` that CleanText keeps unchanged
// (== text.size() when the text is clean).
size_t CleanPrefixLength(std::string_view text);

// Whether GuardFormula would prefix `text` (first byte one of = + - @ \t \r).
bool NeedsFormulaGuard(std::string_view text);

// "2024-03-05" and "2024-03-05 13:04:59" (milliseconds dropped).
void AppendIsoDate(int64_t days, std::string* out);
void AppendIsoDateTime(int64_t days, int64_t ms_of_day, std::string* out);

// Splits UTC instants into local days and milliseconds of the day in one time
// zone. Caches the current offset and the interval it holds for, so a run of
// timestamps costs one comparison each rather than a cctz lookup.
class LocalClock {
 public:
  // InvalidArgument when the zone name is unknown.
  Status Init(const std::string& zone_name);
  void Split(int64_t epoch_ms, int64_t* days, int64_t* ms_of_day);

 private:
  void Refresh(int64_t epoch_s);

  cctz::time_zone zone_;
  int64_t offset_s_ = 0;
  int64_t valid_from_s_ = 1;  // empty interval: the first Split refreshes
  int64_t valid_until_s_ = 0;
};

}  // namespace export_center::render::internal
