#pragma once
// Hot-path helpers shared by the writers: a growable output buffer written
// through raw pointers, and cached date/time formatting. Internal to render/.
//
// Why not std::string: every `+=` re-checks capacity and keeps a NUL, which at
// 12 fields x 1M rows showed up as ~15 % of CSV time; here a field reserves its
// worst case once and writes with plain stores.

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace export_center::render::internal {

class OutBuffer {
 public:
  explicit OutBuffer(size_t capacity = 0) { Grow(capacity); }
  OutBuffer(const OutBuffer&) = delete;
  OutBuffer& operator=(const OutBuffer&) = delete;

  // Returns room for at least `n` more bytes at the end; finish with Commit.
  char* Reserve(size_t n) {
    if (capacity_ - size_ < n) Grow(size_ + n);
    return data_.get() + size_;
  }
  // Sets the end after writing through the pointer Reserve returned.
  void Commit(char* end) { size_ = static_cast<size_t>(end - data_.get()); }

  void Append(std::string_view s) {
    char* p = Reserve(s.size());
    std::memcpy(p, s.data(), s.size());
    size_ += s.size();
  }
  void Push(char c) { *Reserve(1) = c, ++size_; }

  std::string_view view() const { return {data_.get(), size_}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  void Truncate(size_t n) { size_ = n < size_ ? n : size_; }

 private:
  void Grow(size_t need);

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Writes v (>= 0) as exactly two digits.
inline char* PutTwoDigits(char* p, unsigned v) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  std::memcpy(p, kPairs + 2 * v, 2);
  return p + 2;
}

// "yyyy-MM-dd" for days since 1970-01-01, memoised: an export's dates repeat
// (a few thousand distinct days), while civil::DaysToYmd costs ~100 instructions.
// Direct-mapped, so memory is fixed (16 KiB).
class DateTextCache {
 public:
  // Writes exactly 10 bytes at p (years 0..9999) and returns p + 10; years
  // outside that range return nullptr and write nothing.
  char* Put(int64_t days, char* p);

 private:
  static constexpr size_t kSlots = 1024;
  struct Slot {
    int64_t days = INT64_MIN;
    char text[10];
  };
  Slot slots_[kSlots];
};

// "HH:mm:ss" for a millisecond of the day in [0, 86 400 000); 8 bytes.
inline char* PutTimeOfDay(int64_t ms_of_day, char* p) {
  const auto s = static_cast<unsigned>(ms_of_day / 1000);
  p = PutTwoDigits(p, s / 3600);
  *p++ = ':';
  p = PutTwoDigits(p, s / 60 % 60);
  *p++ = ':';
  return PutTwoDigits(p, s % 60);
}

}  // namespace export_center::render::internal
