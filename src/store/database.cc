#include "store/database.h"

#include <charconv>
#include <chrono>
#include <random>
#include <thread>

namespace export_center::store {

const std::string& Row::Text(size_t i) const {
  static const std::string kEmpty;
  return IsNull(i) ? kEmpty : *cells_[i];
}

std::optional<std::string> Row::OptText(size_t i) const {
  if (IsNull(i)) return std::nullopt;
  return cells_[i];
}

int64_t Row::Int(size_t i) const { return OptInt(i).value_or(0); }

std::optional<int64_t> Row::OptInt(size_t i) const {
  if (IsNull(i)) return std::nullopt;
  const std::string& s = *cells_[i];
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  return v;
}

StatusOr<Rows> Database::Query(std::string_view sql, const SqlParams& params) {
  Rows rows;
  EC_RETURN_IF_ERROR(WithConnection([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(rows, c.Query(sql, params));
    return Status::Ok();
  }));
  return rows;
}

StatusOr<int64_t> Database::Exec(std::string_view sql, const SqlParams& params) {
  int64_t n = 0;
  EC_RETURN_IF_ERROR(WithConnection([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(n, c.Exec(sql, params));
    return Status::Ok();
  }));
  return n;
}

Status RunAgainAfterLockConflicts(int retries,
                                  const std::function<Status(bool* lock_conflict)>& run_once) {
  for (int attempt = 0;; ++attempt) {
    bool lock_conflict = false;
    Status status = run_once(&lock_conflict);
    if (status.ok() || !lock_conflict || attempt >= retries) return status;
    thread_local std::mt19937 random(std::random_device{}());
    std::uniform_int_distribution<int> ms(5, 25 * (attempt + 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms(random)));
  }
}

}  // namespace export_center::store
