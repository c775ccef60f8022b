#include "source/sql/sql_template_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <utility>

#include "common/ascii.h"
#include "common/read_ahead.h"
#include "common/thread_guard.h"
#include "registry/registry.h"
#include "source/sql/enrichment.h"
#include "source/sql/keyset_paging.h"
#include "source/sql/param_schema.h"
#include "source/sql/plan_advice.h"
#include "source/sql/sql_template/sql_scanner.h"
#include "source/sql/sql_template/sql_template.h"

namespace export_center::source {
namespace {

using nlohmann::json;

class SqlTemplateSource : public RowSource {
 public:
  SqlTemplateSource(SqlTemplateSourceOptions options, std::unique_ptr<SqlContractClient> client,
                    std::shared_ptr<ReadOnlyDatasource> datasource)
      : options_(std::move(options)),
        client_(std::move(client)),
        datasource_(std::move(datasource)) {}

  const std::vector<task::Column>& columns() const override { return columns_; }
  std::optional<task::TaskState> terminal_state() const override { return terminal_state_; }
  std::optional<std::string> failure_code() const override { return failure_code_; }
  std::shared_ptr<const std::string> excel_template() const override { return excel_template_; }
  std::vector<task::PlanAdvice> plan_advice() const override { return plan_advice_; }
  // The datasource's statements (a contract call ends at its own timeout).
  void Interrupt(const Status& reason) override { datasource_->Interrupt(reason); }

  StatusOr<Page> NextPage() override {
    if (done_) return Internal("NextPage called after the last page");
    if (!prepared_) {
      Status s = Prepare();
      if (!s.ok()) {
        spdlog::warn("sql-template prepare failed taskId={} exportType={} queryId={}: {}",
                     options_.task_id, options_.export_type, options_.query_id, s.ToString());
        return s;
      }
      prepared_ = true;
    }
    return FetchPage();
  }

 private:
  Status Prepare();
  Status CheckContract();
  Status CheckDollars();
  StatusOr<std::string> RecordedContractVersion();
  Status ResolveColumns(const std::vector<std::string>& result_columns);
  Status PlanEnrichment();
  Status PlanPaging(const QueryDescription& description);
  StatusOr<std::vector<std::string>> DeclaredUniqueKey(
      const std::vector<std::string>& labels) const;
  Status CheckCounts();
  struct Counts {
    StatusOr<int64_t> derived = Internal("not counted");
    StatusOr<int64_t> list = Internal("not counted");
  };
  Counts CountBoth();
  StatusOr<int64_t> DerivedCount(std::vector<bool>* nullable = nullptr);
  StatusOr<Page> FetchPage();
  // A page's rows and whether the database had more after them.
  struct Fetched {
    ResultSet raw;
    bool has_more = false;
  };
  StatusOr<Fetched> ReadPage();
  // A page as the lookup stage hands it on: its rows and enriched cells.
  struct LookedUp {
    Fetched fetched;
    Enrichment::PageCells cells;
  };
  StatusOr<LookedUp> LookUpNextPage();
  struct KeysetBreak {
    bool boundary_twin = false;  // the last exported row's tuple came twice
    std::string reason;
  };
  StatusOr<Fetched> FetchKeysetRows();
  StatusOr<Fetched> FetchOffsetRows();
  std::optional<KeysetBreak> KeysetBroken(const ResultSet& raw) const;
  StatusOr<Fetched> LeaveKeyset(const KeysetBreak& why);
  std::vector<std::optional<std::string>> TupleOf(
      const std::vector<std::optional<std::string>>& row) const;
  StatusOr<task::Row> ConvertRow(const std::vector<std::optional<std::string>>& raw, int64_t n);
  Status CheckFinalCount();
  std::string OffsetSql() const;
  void AdvisePageStatement();
  void AdviseEnrichment(const ResultSet& first_page);
  void Advise(const std::string& statement, const std::string& sql,
              const std::vector<json>& params);
  Status Terminal(task::TaskState state, Status status) {
    terminal_state_ = state;
    return status;
  }
  Status Unsafe(const UnsafeTemplateUse& unsafe);

  SqlTemplateSourceOptions options_;
  std::unique_ptr<SqlContractClient> client_;
  std::shared_ptr<ReadOnlyDatasource> datasource_;

  json params_;
  sql_template::RenderOptions render_options_;  // the names ${} may not read
  SqlContract contract_;
  std::string sql_;  // rendered, scanned, without a trailing ';'
  std::vector<json> bindings_;
  std::string order_by_;  // validated, as the contract gave it
  // Paging (docs/sql-template-route.md#paging): by key when the order holds
  // a unique key, else by OFFSET.
  std::vector<OrderTerm> order_;  // order_by_ plus the key's missing columns
  std::vector<int> order_index_;  // result index of each term
  std::vector<bool> nullable_;    // per term: the pre-flight count found a NULL
  std::optional<KeysetQuery> keyset_;
  std::vector<std::optional<std::string>> boundary_;      // last exported row's order tuple
  std::vector<json> boundary_params_;                     // the same, to bind
  std::vector<std::optional<std::string>> boundary_row_;  // the whole last exported row
  // After keyset paging gave up (LeaveKeyset): OFFSET pages ordered by every
  // column, from db_offset_, skipping once a row exported already.
  bool order_by_every_column_ = false;
  int64_t db_offset_ = 0;  // rows the OFFSET pages have read past
  std::optional<std::vector<std::optional<std::string>>> skip_once_;
  std::vector<ColumnPlan> plan_;
  std::vector<task::Column> columns_;
  std::map<std::string, int> result_index_;  // lower-case result label → index
  size_t result_width_ = 0;                  // result columns
  std::unique_ptr<Enrichment> enrichment_;   // after Prepare; uses client_ and datasource_
  int64_t total_ = 0;
  int64_t offset_ = 0;
  // Opened before the pre-flight count: when it proves nothing was committed
  // since, the count after the last page is known without running it.
  std::unique_ptr<CommitWatch> commit_watch_;
  bool prepared_ = false;
  bool done_ = false;
  std::optional<task::TaskState> terminal_state_;
  std::optional<std::string> failure_code_;
  std::shared_ptr<const std::string> excel_template_;  // EXCEL_TEMPLATE contracts only
  std::vector<task::PlanAdvice> plan_advice_;
  bool enrichment_advised_ = false;
  // Two stages ahead of the caller (docs/sql-template-route.md#paging): the
  // page statements, and the lookups of each page's enriched cells. After
  // Prepare the paging state above — keyset_, boundary_*,
  // order_by_every_column_, db_offset_, skip_once_, rows_read_ — belongs to
  // page_reader_'s worker; enrichment_'s lookups, enrichment_advised_ and
  // (from the first page on) plan_advice_ to lookup_ahead_'s; the rest to
  // the caller. Declared last: destroyed first, the lookup stage (which
  // waits on the reader) before the reader, so a statement in flight ends
  // before the members it reads.
  int64_t rows_read_ = 0;  // rows the page statements have delivered so far
  std::optional<ReadAhead<Fetched>> page_reader_;
  std::optional<ReadAhead<LookedUp>> lookup_ahead_;
};

Status SqlTemplateSource::Prepare() {
  EC_ASSIGN_OR_RETURN(params_, TemplateParameters(options_.parameters_json, options_.tenant_id,
                                                  options_.app_code, options_.requested_by));
  EC_RETURN_IF_ERROR(
      sql_template::CheckQueryEnabled(options_.query_id, options_.registered_query_ids));
  EC_ASSIGN_OR_RETURN(contract_, client_->GetSqlTemplate(params_));
  EC_RETURN_IF_ERROR(CheckContract());
  render_options_.untrusted = UntrustedParameters(params_, options_.parameter_specs);
  EC_RETURN_IF_ERROR(CheckDollars());
  auto rendered = sql_template::RenderTemplate(contract_.sql_template, params_, render_options_);
  if (!rendered.ok()) return rendered.status().WithContext("rendering the contract's sqlTemplate");
  EC_RETURN_IF_ERROR(sql_template::ScanSql(rendered->sql));
  sql_ = StripTrailingSemicolon(rendered->sql);
  bindings_ = std::move(rendered->bindings);
  // The result's labels (and a primary key among them) without reading rows.
  auto description = datasource_->Describe(sql_, bindings_, contract_.schema);
  if (!description.ok()) return description.status().WithContext("describing the rendered SQL");
  EC_RETURN_IF_ERROR(ResolveColumns(description->columns));
  auto order_by = sql_template::ValidateOrderBy(contract_.order_by, description->columns);
  if (!order_by.ok()) return order_by.status().WithContext("contract orderBy");
  order_by_ = *order_by;
  EC_RETURN_IF_ERROR(PlanPaging(*description));
  EC_RETURN_IF_ERROR(PlanEnrichment());
  EC_RETURN_IF_ERROR(CheckCounts());
  if (!order_.empty()) keyset_.emplace(sql_, order_, nullable_, datasource_->ordering());
  AdvisePageStatement();
  return Status::Ok();
}

// docs/sql-template-route.md#plan-advice: the first page statement exactly
// as FetchPage sends it. Later pages differ only by the key seek's
// boundary (or the OFFSET), which plans the same way.
void SqlTemplateSource::AdvisePageStatement() {
  std::vector<json> params = bindings_;
  if (keyset_) {
    params.emplace_back(static_cast<int64_t>(options_.batch_size));
    Advise("page", keyset_->first_page(), params);
  } else {
    params.emplace_back(options_.batch_size);
    params.emplace_back(0);
    Advise("page", OffsetSql(), params);
  }
}

// Once per attempt, with the first page's keys, before its lookups run.
void SqlTemplateSource::AdviseEnrichment(const ResultSet& first_page) {
  if (enrichment_advised_) return;
  enrichment_advised_ = true;
  for (const auto& statement : enrichment_->StatementsFor(first_page)) {
    Advise(statement.label, statement.sql, statement.bindings);
  }
}

// One planning round trip, bounded by plan_timeout_ms; a plan that fails
// or cannot be read is logged and ignored: advice never stops an export.
void SqlTemplateSource::Advise(const std::string& statement, const std::string& sql,
                               const std::vector<json>& params) {
  auto plan = datasource_->Explain(sql, params, contract_.schema, options_.plan_timeout_ms);
  if (!plan.ok()) {
    spdlog::info("sql-template taskId={} queryId={}: no plan advice for the {} statement: {}",
                 options_.task_id, options_.query_id, statement, plan.status().ToString());
    return;
  }
  for (auto& advice : ReadPlanAdvice(*plan, sql, options_.batch_size, statement)) {
    spdlog::warn("sql-template taskId={} queryId={}: plan advice: {}", options_.task_id,
                 options_.query_id, FormatPlanAdvice(advice));
    plan_advice_.push_back(std::move(advice));
  }
}

// A declared uniqueKey wins; else a primary key the datasource found among
// the result columns. With either, pages seek by key and the order is made
// total with the key; without, pages count an OFFSET, and the task log says
// why the export is slower.
Status SqlTemplateSource::PlanPaging(const QueryDescription& description) {
  EC_ASSIGN_OR_RETURN(std::vector<std::string> key, DeclaredUniqueKey(description.columns));
  const char* origin = "the contract's uniqueKey";
  if (key.empty()) {
    key = description.primary_key;
    origin = "the primary key in the result";
  }
  if (key.empty()) {
    spdlog::warn(
        "sql-template taskId={} queryId={}: no unique key among the result columns (declare "
        "uniqueKey in the contract): paging by OFFSET, each page re-reads the rows before it{}",
        options_.task_id, options_.query_id,
        order_by_.empty() ? "; without an orderBy pages may overlap" : "");
    return Status::Ok();
  }
  order_ = TotalOrder(ParseOrderBy(order_by_), key);
  for (const auto& term : order_)
    order_index_.push_back(result_index_.at(ToLowerAscii(term.column)));
  spdlog::info("sql-template taskId={} queryId={}: paging by key ({}), order {}", options_.task_id,
               options_.query_id, origin, FormatOrderBy(order_));
  return Status::Ok();
}

StatusOr<std::vector<std::string>> SqlTemplateSource::DeclaredUniqueKey(
    const std::vector<std::string>& labels) const {
  std::vector<std::string> key;
  for (const auto& column : contract_.unique_key) {
    auto it = std::find_if(labels.begin(), labels.end(), [&](const std::string& l) {
      return ToLowerAscii(l) == ToLowerAscii(column);
    });
    if (it == labels.end()) {
      return InvalidArgument("contract uniqueKey column " + column + " is not a result column");
    }
    key.push_back(*it);
  }
  return key;
}

Status SqlTemplateSource::CheckContract() {
  if (!contract_.tenant.empty() && contract_.tenant != options_.tenant_id) {
    return PermissionDenied("the contract answered for tenant " + contract_.tenant +
                            ", not the task's tenant");
  }
  EC_RETURN_IF_ERROR(CheckSchemaName(contract_.schema));
  if (contract_.template_type == "EXCEL_TEMPLATE") {
    if (contract_.excel_template.empty()) {
      return InvalidArgument("templateType EXCEL_TEMPLATE without an excelTemplate");
    }
    excel_template_ = std::make_shared<const std::string>(contract_.excel_template);
  } else if (contract_.template_type != "METADATA") {
    return InvalidArgument("templateType " + contract_.template_type +
                           " is not supported; allowed: METADATA, EXCEL_TEMPLATE");
  }
  EC_ASSIGN_OR_RETURN(std::vector<std::string> undeclared,
                      CheckParamSchema(contract_.param_schema, options_.parameter_specs));
  for (const std::string& advice : undeclared) {
    spdlog::warn("sql-template taskId={} queryId={}: {}; a user cannot give it", options_.task_id,
                 options_.query_id, advice);
  }
  if (contract_.support_version) {
    EC_ASSIGN_OR_RETURN(std::string recorded, RecordedContractVersion());
    if (recorded != contract_.version) {
      return Terminal(
          task::TaskState::kStale,
          InvalidArgument("the export's query logic was upgraded (contract version " + recorded +
                          " → " + contract_.version + "); please export again"));
    }
  }
  return Status::Ok();
}

// docs/sql-template.md#what--may-read: every template of the contract, enrich
// SQL included, before any of them runs.
Status SqlTemplateSource::CheckDollars() {
  EC_ASSIGN_OR_RETURN(std::optional<UnsafeTemplateUse> found,
                      FindUnsafeTemplateUse(contract_, render_options_.untrusted));
  if (found) return Unsafe(*found);
  return Status::Ok();
}

// Permanent and loud: the contract, not this task, is at fault, and it would
// have let a user's text into the SQL.
Status SqlTemplateSource::Unsafe(const UnsafeTemplateUse& unsafe) {
  failure_code_ = kUnsafeTemplateCode;
  std::string message = "unsafe template (" + unsafe.where + "): " + unsafe.message;
  spdlog::error("SECURITY: sql-template taskId={} exportType={} queryId={} refused: {}",
                options_.task_id, options_.export_type, options_.query_id, message);
  return InvalidArgument(message);
}

// The version to compare with. A task whose version could not be fetched at
// create is pinned now, before any page, so a retry after an upgrade still
// ends STALE (docs/task-lifecycle.md#stale-and-inconsistent).
StatusOr<std::string> SqlTemplateSource::RecordedContractVersion() {
  if (options_.contract_version) return *options_.contract_version;
  if (!options_.pin_contract_version) {
    return Internal("no contract version was recorded for the task and none can be pinned");
  }
  auto pinned = options_.pin_contract_version(contract_.version);
  if (!pinned.ok()) return pinned.status().WithContext("pinning the contract version");
  spdlog::info("sql-template taskId={} pinned contract version {} at its first attempt",
               options_.task_id, *pinned);
  return pinned;
}

Status SqlTemplateSource::ResolveColumns(const std::vector<std::string>& result_columns) {
  result_width_ = result_columns.size();
  for (size_t i = 0; i < result_columns.size(); ++i) {
    result_index_.emplace(ToLowerAscii(result_columns[i]), static_cast<int>(i));
  }
  for (const auto& c : contract_.columns) {
    ColumnPlan p{c, -1};
    if (!c.enrich) {
      auto it = result_index_.find(ToLowerAscii(c.column.key));
      if (it == result_index_.end()) {
        return InvalidArgument("contract column " + c.column.key + " is not in the query result");
      }
      p.result_index = it->second;
    }
    plan_.push_back(std::move(p));
    columns_.push_back(c.column);
  }
  return Status::Ok();
}

// docs/sql-template-route.md#enrichment (enrichment.h).
Status SqlTemplateSource::PlanEnrichment() {
  Enrichment::Context context;
  context.task_id = options_.task_id;
  context.query_id = options_.query_id;
  context.batch_size = options_.batch_size;
  context.timezone = options_.timezone;
  context.params = params_;
  context.untrusted = render_options_.untrusted;
  EC_ASSIGN_OR_RETURN(enrichment_,
                      Enrichment::Plan(contract_, plan_, result_index_, std::move(context),
                                       client_.get(), datasource_.get()));
  return Status::Ok();
}

// With keyset paging the same scan counts each order term's non-NULL values:
// a term without NULLs gets a plain comparison an index can serve.
StatusOr<int64_t> SqlTemplateSource::DerivedCount(std::vector<bool>* nullable) {
  std::string counts = "COUNT(*)";
  for (const auto& term : order_) counts += ", COUNT(" + term.column + ")";
  EC_ASSIGN_OR_RETURN(ResultSet rs,
                      datasource_->Query("SELECT " + counts + " FROM (" + sql_ + ") _t", bindings_,
                                         contract_.schema));
  int64_t n = 0;
  if (rs.rows.size() != 1 || rs.rows[0].size() != order_.size() + 1 || !rs.rows[0][0] ||
      !ParseDatabaseInt(*rs.rows[0][0], &n)) {
    return Internal("derived COUNT(*) returned no number");
  }
  if (nullable == nullptr) return n;
  nullable->assign(order_.size(), true);
  for (size_t i = 0; i < order_.size(); ++i) {
    int64_t non_null = 0;
    if (rs.rows[0][i + 1] && ParseDatabaseInt(*rs.rows[0][i + 1], &non_null))
      (*nullable)[i] = non_null != n;
  }
  return n;
}

// docs/sql-template-route.md#consistency-checks, check 3: the platform's own
// count of the template against the business list count, re-checked once
// after a back-off for replica lag.
Status SqlTemplateSource::CheckCounts() {
  commit_watch_ = datasource_->WatchCommits(contract_.schema);
  if (!contract_.support_count_for_list) {
    EC_ASSIGN_OR_RETURN(total_, DerivedCount(&nullable_));
  } else {
    Counts counts = CountBoth();
    EC_ASSIGN_OR_RETURN(total_, std::move(counts.derived));
    EC_ASSIGN_OR_RETURN(int64_t list, std::move(counts.list));
    if (list != total_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.count_recheck_backoff_ms));
      counts = CountBoth();
      EC_ASSIGN_OR_RETURN(total_, std::move(counts.derived));
      EC_ASSIGN_OR_RETURN(list, std::move(counts.list));
    }
    if (list != total_) {
      std::string detail = "export count " + std::to_string(total_) +
                           " differs from the list count " + std::to_string(list);
      if (options_.strict) {
        spdlog::error("ALERT: sql-template inconsistent taskId={} queryId={}: {}", options_.task_id,
                      options_.query_id, detail);
        return Terminal(task::TaskState::kInconsistent, InvalidArgument(detail));
      }
      spdlog::warn("ALERT (lenient, continuing): sql-template taskId={} queryId={}: {}",
                   options_.task_id, options_.query_id, detail);
    }
  }
  if (total_ > options_.max_rows) {
    return LimitExceeded("the export has " + std::to_string(total_) +
                         " rows, more than the maximum of " + std::to_string(options_.max_rows));
  }
  return Status::Ok();
}

// Our count on the replica and the list's count on the business service at
// once: neither needs the other, and with a filter the page's index does not
// cover each walks the tenant's rows (a quarter of a second apiece at a
// million orders on SQLite), all before the first page. The list count runs
// on a thread of its own, the replica's here; both are bounded by their own
// timeouts, so the join is too.
SqlTemplateSource::Counts SqlTemplateSource::CountBoth() {
  Counts counts;
  std::thread list = StartWorkerThread("list_count", [&] {
    counts.list = RunGuardedOnce("list_count", [&] { return client_->CountForList(params_); });
  });
  struct JoinOnExit {  // also when DerivedCount throws
    std::thread& thread;
    ~JoinOnExit() { thread.join(); }
  } join{list};
  counts.derived = DerivedCount(&nullable_);
  return counts;
}

// A pipeline of three, each a page apart: page_reader_'s worker runs the
// page statement of page k+2, lookup_ahead_'s looks up the enriched cells
// of page k+1 (a callback or enrich SQL, most of a page's time), and here
// page k is converted and filled — while the attempt writes page k−1. A
// stage starts its next page only after one that has more and came without
// error, so a caller that stops (cancel, lease, size cap) leaves at most a
// page statement and a lookup to finish.
StatusOr<Page> SqlTemplateSource::FetchPage() {
  if (!lookup_ahead_) {
    page_reader_.emplace([this] { return ReadPage(); }, "read_ahead");
    page_reader_->Start();
    lookup_ahead_.emplace([this] { return LookUpNextPage(); }, "lookup_ahead");
    lookup_ahead_->Start();
  }
  EC_ASSIGN_OR_RETURN(LookedUp looked_up, lookup_ahead_->Take());
  if (looked_up.fetched.has_more) lookup_ahead_->Start();
  const ResultSet& raw = looked_up.fetched.raw;
  Page page;
  page.has_more = looked_up.fetched.has_more;
  page.rows.reserve(raw.rows.size());
  for (size_t i = 0; i < raw.rows.size(); ++i) {
    EC_ASSIGN_OR_RETURN(task::Row row,
                        ConvertRow(raw.rows[i], offset_ + static_cast<int64_t>(i) + 1));
    page.rows.push_back(std::move(row));
  }
  Enrichment::Fill(std::move(looked_up.cells), &page.rows);
  offset_ += static_cast<int64_t>(page.rows.size());
  page.total_rows = total_;
  if (offset_ > options_.max_rows) {
    return LimitExceeded("export exceeds the max-rows limit of " +
                         std::to_string(options_.max_rows));
  }
  if (!page.has_more) {
    EC_RETURN_IF_ERROR(CheckFinalCount());
    done_ = true;
  }
  return page;
}

// On lookup_ahead_'s worker: the next page from page_reader_ (starting the
// one after it) and its enriched cells. The first page's enrich statements
// are planned before its lookups run.
StatusOr<SqlTemplateSource::LookedUp> SqlTemplateSource::LookUpNextPage() {
  EC_ASSIGN_OR_RETURN(Fetched fetched, page_reader_->Take());
  if (fetched.has_more) page_reader_->Start();
  AdviseEnrichment(fetched.raw);
  EC_ASSIGN_OR_RETURN(Enrichment::PageCells cells, enrichment_->Lookup(fetched.raw));
  return LookedUp{std::move(fetched), std::move(cells)};
}

// One page statement, on page_reader_'s worker: the rows and, by key, the
// boundary the next page seeks from — all it needs of this page, so it can
// run while this page is still converted and enriched.
StatusOr<SqlTemplateSource::Fetched> SqlTemplateSource::ReadPage() {
  EC_ASSIGN_OR_RETURN(Fetched fetched, keyset_ ? FetchKeysetRows() : FetchOffsetRows());
  const ResultSet& raw = fetched.raw;
  if (keyset_ && !raw.rows.empty()) {
    boundary_ = TupleOf(raw.rows.back());
    boundary_row_ = raw.rows.back();
    boundary_params_.clear();
    for (int index : order_index_) boundary_params_.push_back(raw.last_row_params[index]);
  }
  rows_read_ += static_cast<int64_t>(raw.rows.size());
  return fetched;
}

// The first page is the order's first `batch` rows. Every later page asks
// for one row more, from the last exported row on: that row comes back
// first and is dropped, so a full page still brings `batch` new rows. When
// it was deleted meanwhile, the page brings batch+1 rows: none is cut off,
// since last_row_params describe only the last one.
StatusOr<SqlTemplateSource::Fetched> SqlTemplateSource::FetchKeysetRows() {
  std::vector<json> params = bindings_;
  const std::string* sql = &keyset_->first_page();
  size_t limit = static_cast<size_t>(options_.batch_size);
  if (!boundary_.empty()) {
    KeysetQuery::Page from = keyset_->From(boundary_params_);
    sql = from.sql;
    params.insert(params.end(), from.params.begin(), from.params.end());
    ++limit;
  }
  params.emplace_back(static_cast<int64_t>(limit));
  EC_ASSIGN_OR_RETURN(ResultSet raw, datasource_->Query(*sql, params, contract_.schema));
  if (raw.rows.size() > limit) return Internal("the datasource returned more rows than LIMIT");
  if (auto broken = KeysetBroken(raw)) return LeaveKeyset(*broken);
  const bool full = raw.rows.size() == limit;
  if (!boundary_.empty() && !raw.rows.empty() && TupleOf(raw.rows.front()) == boundary_) {
    raw.rows.erase(raw.rows.begin());  // the last row of the previous page
  }
  db_offset_ += static_cast<int64_t>(raw.rows.size());
  return Fetched{std::move(raw), full};
}

// Why the key cannot be trusted any more, or nullopt: the row the last page
// ended with has a twin (kBoundaryTwin: the next seek would skip it), two
// new rows share a tuple, or a term the pre-flight count found no NULL in
// holds one (the comparison built for it skips NULL rows).
std::optional<SqlTemplateSource::KeysetBreak> SqlTemplateSource::KeysetBroken(
    const ResultSet& raw) const {
  if (!raw.rows.empty() && raw.last_row_params.size() != raw.columns.size()) {
    return KeysetBreak{false, "the datasource did not return the last row's values to bind"};
  }
  std::vector<std::optional<std::string>> previous;
  for (size_t r = 0; r < raw.rows.size(); ++r) {
    auto tuple = TupleOf(raw.rows[r]);
    for (size_t i = 0; i < tuple.size(); ++i) {
      if (!tuple[i] && !nullable_[i]) {
        return KeysetBreak{false, "order column " + order_[i].column +
                                      " holds a NULL the pre-flight count did not find"};
      }
    }
    if (r > 0 && tuple == previous) {
      const bool twin = !boundary_.empty() && tuple == boundary_;
      return KeysetBreak{twin, "two rows share the order tuple: the key is not unique"};
    }
    previous = std::move(tuple);
  }
  return std::nullopt;
}

// Keyset paging stops being safe: OFFSET pages take over, ordered by every
// result column after the terms, so that ties fall the same way on every
// page. Every tuple exported so far was unique, hence the pages so far hold
// exactly the rows up to the boundary — except when the boundary itself
// has a twin: then OFFSET restarts at the boundary's group and the one row
// of it already exported is skipped when it comes again.
StatusOr<SqlTemplateSource::Fetched> SqlTemplateSource::LeaveKeyset(const KeysetBreak& why) {
  spdlog::warn(
      "sql-template taskId={} queryId={}: {}; paging by OFFSET from row {} on (slower; no row "
      "is lost)",
      options_.task_id, options_.query_id, why.reason, rows_read_ + 1);
  keyset_.reset();
  order_by_every_column_ = true;
  db_offset_ = rows_read_;
  if (why.boundary_twin) {
    db_offset_ = rows_read_ - 1;
    skip_once_ = boundary_row_;
  }
  return FetchOffsetRows();
}

std::vector<std::optional<std::string>> SqlTemplateSource::TupleOf(
    const std::vector<std::optional<std::string>>& row) const {
  std::vector<std::optional<std::string>> tuple;
  tuple.reserve(order_index_.size());
  for (int index : order_index_) tuple.push_back(row[index]);
  return tuple;
}

std::string SqlTemplateSource::OffsetSql() const {
  std::string sql = "SELECT * FROM (" + sql_ + ") _t";
  std::string order = order_.empty() ? order_by_ : FormatOrderBy(order_);
  if (order_by_every_column_) {
    // By position: a label need not be a plain identifier.
    for (size_t c = 0; c < result_width_; ++c) {
      bool in_order = std::find(order_index_.begin(), order_index_.end(), static_cast<int>(c)) !=
                      order_index_.end();
      if (!in_order) order += ", " + std::to_string(c + 1);
    }
  }
  if (!order.empty()) sql += " ORDER BY " + order;
  return sql + " LIMIT ? OFFSET ?";
}

StatusOr<SqlTemplateSource::Fetched> SqlTemplateSource::FetchOffsetRows() {
  const std::string sql = OffsetSql();
  std::vector<json> params = bindings_;
  params.emplace_back(options_.batch_size);
  params.emplace_back(db_offset_);
  EC_ASSIGN_OR_RETURN(ResultSet raw, datasource_->Query(sql, params, contract_.schema));
  if (raw.rows.size() > static_cast<size_t>(options_.batch_size)) {
    return Internal("the datasource returned more rows than LIMIT");
  }
  const bool full = raw.rows.size() == static_cast<size_t>(options_.batch_size);
  db_offset_ += static_cast<int64_t>(raw.rows.size());
  if (skip_once_) {
    auto again = std::find(raw.rows.begin(), raw.rows.end(), *skip_once_);
    if (again != raw.rows.end()) {
      raw.rows.erase(again);
      skip_once_.reset();
    }
  }
  return Fetched{std::move(raw), full};
}

StatusOr<task::Row> SqlTemplateSource::ConvertRow(
    const std::vector<std::optional<std::string>>& raw, int64_t n) {
  task::Row row;
  row.reserve(plan_.size());
  for (const auto& p : plan_) {
    if (p.result_index < 0 || static_cast<size_t>(p.result_index) >= raw.size()) {
      row.emplace_back();
      continue;
    }
    auto v = ParseDatabaseValue(p.contract.column, raw[p.result_index], options_.timezone);
    if (!v.ok()) return v.status().WithContext("row " + std::to_string(n));
    row.push_back(std::move(v).value());
  }
  return row;
}

// Data that changed mid-export: OFFSET pages skip or repeat rows, key seeks
// miss a row added behind them or keep one removed. The traces: an exported
// total other than the pre-flight count, or a count after the last page
// other than the one before the first.
Status SqlTemplateSource::CheckFinalCount() {
  std::string detail;
  if (offset_ != total_) {
    detail = "exported " + std::to_string(offset_) + " rows but the pre-flight count was " +
             std::to_string(total_) + ": the data changed during the export";
  } else {
    // A key seek does not trip over a row added or removed behind it, so
    // the exported total may still match: counting again tells — unless
    // the database proves nothing was committed since the first count, so
    // every statement read the same rows (on a quiet replica a full walk of
    // the filter saved, 0.1 s at a million orders).
    if (commit_watch_ && commit_watch_->NothingCommitted()) return Status::Ok();
    EC_ASSIGN_OR_RETURN(int64_t now, DerivedCount());
    if (now == total_) return Status::Ok();
    detail = "the query counted " + std::to_string(total_) + " rows before the export and " +
             std::to_string(now) + " after it: the data changed during the export";
  }
  if (options_.strict) {
    spdlog::error("ALERT: sql-template inconsistent taskId={} queryId={}: {}", options_.task_id,
                  options_.query_id, detail);
    return Terminal(task::TaskState::kInconsistent, InvalidArgument(detail));
  }
  spdlog::warn("ALERT (lenient, continuing): sql-template taskId={} queryId={}: {}",
               options_.task_id, options_.query_id, detail);
  return Status::Ok();
}

}  // namespace

std::unique_ptr<RowSource> NewSqlTemplateSource(const SqlTemplateSourceOptions& options,
                                                std::unique_ptr<SqlContractClient> client,
                                                std::shared_ptr<ReadOnlyDatasource> datasource) {
  return std::make_unique<SqlTemplateSource>(options, std::move(client), std::move(datasource));
}

std::set<std::string> RegisteredQueryIds(const registry::RegistrySnapshot& snapshot) {
  std::set<std::string> ids;
  for (const auto& [name, def] : snapshot.definitions) {
    if (def.source == registry::SourceKind::kSqlTemplate) ids.insert(def.query_id);
  }
  return ids;
}

SqlTemplateSourceOptions MakeSqlTemplateSourceOptions(const registry::ExportDefinition& definition,
                                                      const task::Task& task,
                                                      std::set<std::string> registered_query_ids) {
  SqlTemplateSourceOptions o;
  o.export_type = definition.name;
  o.query_id = definition.query_id;
  o.registered_query_ids = std::move(registered_query_ids);
  o.task_id = task.id;
  o.tenant_id = task.tenant_id;
  o.app_code = task.app_code;
  o.requested_by = task.requested_by;
  o.parameters_json = task.parameters_json.empty() ? "{}" : task.parameters_json;
  o.contract_version = task.contract_version;
  o.strict = definition.consistency != "lenient";
  o.batch_size = definition.batch_size;
  o.max_rows = definition.max_rows;
  o.timezone = definition.timezone;
  o.parameter_specs = definition.parameters;
  return o;
}

}  // namespace export_center::source
