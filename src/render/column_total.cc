#include "render/column_total.h"

#include <algorithm>
#include <variant>

namespace export_center::render::internal {
namespace {

constexpr int kMaxScale = 30;

bool Pow10(int n, __int128* out) {
  __int128 p = 1;
  for (int i = 0; i < n; ++i) {
    if (__builtin_mul_overflow(p, 10, &p)) return false;
  }
  *out = p;
  return true;
}

std::string ToText(__int128 v, int scale) {
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : v;
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  while (static_cast<int>(digits.size()) <= scale) digits.push_back('0');
  std::reverse(digits.begin(), digits.end());
  if (scale > 0) digits.insert(digits.end() - scale, '.');
  return negative ? "-" + digits : digits;
}

// a / b rounded half away from zero. REQUIRES: b > 0.
__int128 DivRound(__int128 a, __int128 b) {
  __int128 q = a / b;
  __int128 r = a % b;
  if (r < 0) r = -r;
  if (r * 2 >= b) q += a < 0 ? -1 : 1;
  return q;
}

}  // namespace

ColumnTotal ColumnTotal::For(const task::Column& column) {
  const bool scaled =
      column.type == task::ColumnType::kDecimal || column.total == task::TotalKind::kAvg;
  return ColumnTotal(column.total, scaled ? std::clamp(column.scale, 0, 10) : 0);
}

bool ColumnTotal::Parse(const std::string& digits, Exact* out) {
  size_t i = 0;
  const bool negative = !digits.empty() && digits[0] == '-';
  if (negative) ++i;
  __int128 v = 0;
  int scale = 0;
  bool point = false, any = false;
  for (; i < digits.size(); ++i) {
    const char c = digits[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) return false;
    any = true;
    if (point && ++scale > kMaxScale) return false;
  }
  if (!any) return false;
  out->v = negative ? -v : v;
  out->scale = scale;
  return true;
}

bool ColumnTotal::Rescale(Exact* x, int scale) {
  if (scale <= x->scale) return true;
  __int128 p;
  if (!Pow10(scale - x->scale, &p) || __builtin_mul_overflow(x->v, p, &x->v)) return false;
  x->scale = scale;
  return true;
}

void ColumnTotal::Add(const task::CellValue& value) {
  Exact x;
  if (const auto* i = std::get_if<int64_t>(&value)) {
    x.v = *i;
  } else if (const auto* d = std::get_if<task::Decimal>(&value)) {
    if (!Parse(d->digits, &x)) {
      overflow_ = true;
      ++count_;
      return;
    }
  } else {
    return;
  }
  AddExact(x);
}

void ColumnTotal::AddExact(Exact x) {
  ++count_;
  if (kind_ == task::TotalKind::kCount || overflow_) return;
  if (count_ == 1 && kind_ != task::TotalKind::kSum && kind_ != task::TotalKind::kAvg) {
    acc_ = x;
    return;
  }
  const int scale = std::max(acc_.scale, x.scale);
  if (!Rescale(&acc_, scale) || !Rescale(&x, scale)) {
    overflow_ = true;
    return;
  }
  switch (kind_) {
    case task::TotalKind::kMin:
      if (x.v < acc_.v) acc_ = x;
      break;
    case task::TotalKind::kMax:
      if (x.v > acc_.v) acc_ = x;
      break;
    default:
      if (__builtin_add_overflow(acc_.v, x.v, &acc_.v)) overflow_ = true;
  }
}

std::optional<std::string> ColumnTotal::Text() const {
  if (kind_ == task::TotalKind::kCount) return std::to_string(count_);
  if (overflow_) return std::nullopt;
  if (kind_ == task::TotalKind::kAvg) {
    if (count_ == 0) return std::nullopt;
    // sum/count at scale_: (v * 10^(scale_ - s)) / count, or v / (count * 10^(s - scale_)).
    __int128 num = acc_.v, den = count_, p;
    if (scale_ >= acc_.scale) {
      if (!Pow10(scale_ - acc_.scale, &p) || __builtin_mul_overflow(num, p, &num)) {
        return std::nullopt;
      }
    } else if (!Pow10(acc_.scale - scale_, &p) || __builtin_mul_overflow(den, p, &den)) {
      return std::nullopt;
    }
    return ToText(DivRound(num, den), scale_);
  }
  if (count_ == 0) return ToText(0, scale_);  // Excel: SUM/MIN/MAX of nothing is 0
  Exact out = acc_;
  if (!Rescale(&out, scale_)) return std::nullopt;
  return ToText(out.v, out.scale);
}

}  // namespace export_center::render::internal
