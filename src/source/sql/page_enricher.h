#pragma once
// PageEnricher: the enriched cells of each page (docs/sql-template-route.md
// #enrichment), the sql-template source's lookup stage (sql_pager.h lists
// the three). Owned by the lookup worker (ReadAhead "lookup_ahead"): the
// enrichment's lookups and the enrich statements' plan advice are touched by
// no other thread until the first page is handed on.
//
// StatementAdviser: one statement's plan advice
// (docs/sql-template-route.md#plan-advice), for the page statement (by the
// caller, in Prepare) and the enrich statements (here).

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "source/sql/datasource/read_only_datasource.h"
#include "source/sql/enrichment.h"
#include "task/plan_advice.h"

namespace export_center::source {

// Asks the datasource for plans and reads them into advice. Stateless;
// thread-safe as the datasource is.
class StatementAdviser {
 public:
  struct Scope {
    ReadOnlyDatasource* datasource = nullptr;  // not owned
    std::string schema;
    int timeout_ms = 2000;  // each plan's deadline; past it the advice is skipped
    int64_t page_rows = 500;
    int64_t task_id = 0;   // for logs
    std::string query_id;  // for logs
  };
  explicit StatementAdviser(Scope scope) : scope_(std::move(scope)) {}

  // One planning round trip; each advice also goes to the task log. A plan
  // that fails or cannot be read is logged and gives none: advice never
  // stops an export.
  std::vector<task::PlanAdvice> Advise(const std::string& statement, const std::string& sql,
                                       const std::vector<nlohmann::json>& params) const;

 private:
  const Scope scope_;
};

// Not thread-safe: one thread (the lookup worker) calls LookUp; advice()
// is read after the first LookUp returned, by whoever received its result.
class PageEnricher {
 public:
  PageEnricher(std::unique_ptr<Enrichment> enrichment, StatementAdviser adviser)
      : enrichment_(std::move(enrichment)), adviser_(std::move(adviser)) {}
  PageEnricher(const PageEnricher&) = delete;
  PageEnricher& operator=(const PageEnricher&) = delete;

  // The enriched cells of `page`. The first call plans the enrich statements
  // with the first page's keys, before its lookups run.
  StatusOr<Enrichment::PageCells> LookUp(const ResultSet& page);

  // The enrich statements' plan advice; complete after the first LookUp.
  const std::vector<task::PlanAdvice>& advice() const { return advice_; }

 private:
  const std::unique_ptr<Enrichment> enrichment_;
  const StatementAdviser adviser_;
  bool advised_ = false;
  std::vector<task::PlanAdvice> advice_;
};

}  // namespace export_center::source
