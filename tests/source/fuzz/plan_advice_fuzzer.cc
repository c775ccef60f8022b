// libFuzzer target for the plan readers of plan advice
// (source/sql/plan_advice.h): SQLite EXPLAIN QUERY PLAN rows, PostgreSQL
// EXPLAIN (FORMAT JSON), MariaDB/MySQL EXPLAIN FORMAT=JSON — bytes from the
// database — and the statement's SQL the SQLite reader takes the predicate
// from.
//
// The input: one byte choosing the plan's kind (s, p, m; anything else is an
// unknown kind), then the plan text, a NUL, and the SQL. Properties beside
// "no crash, no leak": at most kMaxAdvice pieces of advice, each naming a
// table and at least one index column, its DDL a CREATE INDEX on that
// table, and every text valid UTF-8 (the preview answers it as JSON).

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "source/sql/plan_advice.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace source = export_center::source;
  namespace utf8 = export_center::utf8;
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const char kind = static_cast<char>(data[0]);
  source::QueryPlan plan;
  plan.kind = kind == 's' ? "sqlite" : kind == 'p' ? "postgres" : kind == 'm' ? "mysql" : "x";
  const size_t nul = input.find('\0');
  plan.text = std::string(input.substr(0, nul));
  const std::string_view sql = nul == std::string_view::npos ? "" : input.substr(nul + 1);

  const auto advice = source::ReadPlanAdvice(plan, sql, 100, "page");
  if (advice.size() > source::kMaxAdvice) std::abort();
  for (const auto& a : advice) {
    if (a.table.empty() || a.index_columns.empty()) std::abort();
    if (a.suggested_index.rfind("CREATE INDEX ", 0) != 0) std::abort();
    for (const std::string* text :
         {&a.statement, &a.table, &a.plan, &a.predicate, &a.suggested_index}) {
      if (!utf8::IsValid(*text)) std::abort();
    }
    for (const auto& c : a.index_columns) {
      if (!utf8::IsValid(c)) std::abort();
    }
    if (a.estimated_rows && *a.estimated_rows <= 100) std::abort();
    (void)source::FormatPlanAdvice(a);
  }
  return 0;
}
