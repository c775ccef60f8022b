#pragma once
// StatementSource: a RowSource whose pages are statements on a real SQLite
// datasource, forwarding Interrupt to it as the sql-template source does
// (docs/sql-template-route.md#deadlines). Its first page may run a statement
// that only its timeout or a cancel ends; `started` is set when it begins
// and `ended` (with the Status it ended with) when it returns.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "source/row_source.h"
#include "source/sql/datasource/sqlite/sqlite_datasource.h"

namespace export_center::attempt {

// Runs far beyond any test: only a deadline or a cancel ends it.
inline constexpr char kEndlessSql[] =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e12)"
    " SELECT max(x) FROM c";

struct StatementProbe {
  std::atomic<bool> started{false};
  std::atomic<bool> ended{false};
  std::atomic<std::chrono::steady_clock::rep> ended_at{0};
  Mutex mu;
  Status outcome GUARDED_BY(mu);

  Status Outcome() {
    MutexLock lock(&mu);
    return outcome;
  }
  std::chrono::steady_clock::time_point EndedAt() const {
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ended_at));
  }
};

class StatementSource : public source::RowSource {
 public:
  StatementSource(std::shared_ptr<source::ReadOnlyDatasource> ds, std::string sql,
                  StatementProbe* probe)
      : ds_(std::move(ds)), sql_(std::move(sql)), probe_(probe) {}

  const std::vector<task::Column>& columns() const override { return columns_; }
  void Interrupt(const Status& reason) override { ds_->Interrupt(reason); }

  StatusOr<source::Page> NextPage() override {
    probe_->started = true;
    auto result = ds_->Query(sql_, {}, "");
    {
      MutexLock lock(&probe_->mu);
      probe_->outcome = result.ok() ? Status::Ok() : result.status();
    }
    probe_->ended_at = std::chrono::steady_clock::now().time_since_epoch().count();
    probe_->ended = true;
    if (!result.ok()) return result.status();
    source::Page page;
    for (const auto& row : result->rows) page.rows.push_back({row[0].value_or("")});
    page.facts = facts();  // its one page is the first
    return page;
  }

 private:
  std::shared_ptr<source::ReadOnlyDatasource> ds_;
  std::string sql_;
  StatementProbe* probe_;
  std::vector<task::Column> columns_{{"x", "x", task::ColumnType::kString, 10, 0, ""}};
};

}  // namespace export_center::attempt
