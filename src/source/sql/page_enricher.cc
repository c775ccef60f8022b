#include "source/sql/page_enricher.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "source/sql/plan_advice.h"

namespace export_center::source {

std::vector<task::PlanAdvice> StatementAdviser::Advise(
    const std::string& statement, const std::string& sql,
    const std::vector<nlohmann::json>& params) const {
  auto plan = scope_.datasource->Explain(sql, params, scope_.schema, scope_.timeout_ms);
  if (!plan.ok()) {
    spdlog::info("sql-template taskId={} queryId={}: no plan advice for the {} statement: {}",
                 scope_.task_id, scope_.query_id, statement, plan.status().ToString());
    return {};
  }
  std::vector<task::PlanAdvice> found = ReadPlanAdvice(*plan, sql, scope_.page_rows, statement);
  for (const auto& advice : found) {
    spdlog::warn("sql-template taskId={} queryId={}: plan advice: {}", scope_.task_id,
                 scope_.query_id, FormatPlanAdvice(advice));
  }
  return found;
}

// Once per attempt, with the first page's keys, before its lookups run.
StatusOr<Enrichment::PageCells> PageEnricher::LookUp(const ResultSet& page) {
  if (!advised_) {
    advised_ = true;
    for (const auto& statement : enrichment_->StatementsFor(page)) {
      for (auto& advice : adviser_.Advise(statement.label, statement.sql, statement.bindings)) {
        advice_.push_back(std::move(advice));
      }
    }
  }
  return enrichment_->Lookup(page);
}

}  // namespace export_center::source
