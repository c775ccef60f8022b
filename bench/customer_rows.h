#pragma once
// The reference "customer list" rows (bench/gen.h) as typed rows of 12
// columns, shared by the benchmarks that render them.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "bench/gen.h"
#include "render/cell_text.h"
#include "task/table.h"

namespace bench {

namespace task = export_center::task;
namespace render = export_center::render;

inline std::vector<task::Column> Columns() {
  using T = task::ColumnType;
  const T types[12] = {T::kInteger, T::kString,  T::kString,  T::kString,  T::kString,   T::kString,
                       T::kString,  T::kDecimal, T::kDecimal, T::kBoolean, T::kDateTime, T::kDate};
  std::vector<task::Column> cols;
  for (int c = 0; c < 12; ++c) {
    cols.push_back({.key = "c" + std::to_string(c), .title = gen::HEADERS[c], .type = types[c]});
  }
  return cols;
}

inline void Cents(int64_t cents, std::string* out) {
  out->clear();
  if (cents < 0) {
    out->push_back('-');
    cents = -cents;
  }
  *out += std::to_string(cents / 100);
  out->push_back('.');
  out->push_back(static_cast<char>('0' + cents / 10 % 10));
  out->push_back(static_cast<char>('0' + cents % 10));
}

// Fills `row` in place (strings reuse their buffers, as a batch source would).
inline void FillRow(uint64_t i, gen::Row* g, task::Row* row) {
  gen::make_row(i, *g);
  auto str = [&](int c) -> std::string& { return std::get<std::string>((*row)[c]); };
  (*row)[0] = g->id;
  str(1).assign(g->code, g->code_len);
  str(2).assign(g->name, g->name_len);
  str(3).assign(g->contact, g->contact_len);
  str(4).assign(g->phone, 11);
  str(5).assign(g->email, g->email_len);
  str(6).assign(gen::STATUS[g->status]);
  Cents(g->credit_cents, &std::get<task::Decimal>((*row)[7]).digits);
  Cents(g->balance_cents, &std::get<task::Decimal>((*row)[8]).digits);
  (*row)[9] = g->active;
  (*row)[10] = task::DateTime{g->created_at * 1000};
  (*row)[11] = *task::Date::FromDays(g->birthday);
}

// A row whose string and decimal cells FillRow can reuse.
inline task::Row ReusableRow() {
  task::Row row(12);
  for (int c : {1, 2, 3, 4, 5, 6}) row[c] = std::string();
  row[7] = row[8] = task::Decimal{};
  return row;
}

}  // namespace bench
