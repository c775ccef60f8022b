#include "render/out_buffer.h"

#include <algorithm>

#include "render/cell_text.h"

namespace export_center::render::internal {

void OutBuffer::Grow(size_t need) {
  const size_t capacity = std::max<size_t>({need, capacity_ * 2, 256});
  auto data = std::make_unique<char[]>(capacity);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

char* DateTextCache::Put(int64_t days, char* p) {
  Slot& slot = slots_[static_cast<uint64_t>(days) % kSlots];
  if (slot.days != days) {
    int64_t y;
    int m, d;
    civil::DaysToYmd(days, &y, &m, &d);
    if (y < 0 || y > 9999) return nullptr;
    const auto year = static_cast<unsigned>(y);
    char* t = slot.text;
    t = PutTwoDigits(t, year / 100);
    t = PutTwoDigits(t, year % 100);
    *t++ = '-';
    t = PutTwoDigits(t, static_cast<unsigned>(m));
    *t++ = '-';
    PutTwoDigits(t, static_cast<unsigned>(d));
    slot.days = days;
  }
  std::memcpy(p, slot.text, 10);
  return p + 10;
}

}  // namespace export_center::render::internal
