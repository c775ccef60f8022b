#include "source/sql/sql_template_source.h"

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <map>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/thread_guard.h"
#include "common/utf8.h"
#include "registry/registry.h"
#include "source/sql/keyset_paging.h"
#include "source/sql/read_ahead.h"
#include "source/sql/sql_template/sql_scanner.h"
#include "source/sql/sql_template/sql_template.h"

namespace export_center::source {
namespace {

using nlohmann::json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A scanned statement may end in one ';', which must not end up inside "(…) _t".
std::string StripTrailingSemicolon(std::string sql) {
  while (!sql.empty() &&
         (std::isspace(static_cast<unsigned char>(sql.back())) || sql.back() == ';')) {
    sql.pop_back();
  }
  return sql;
}

// Called for every integer and DATETIME cell of an export: from_chars, no
// copy and no exception for text that is not a number.
bool ParseInt(std::string_view text, int64_t* out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const char* end = text.data() + text.size();
  int64_t v = 0;
  auto [used, error] = std::from_chars(text.data(), end, v);
  if (error != std::errc() || used != end || text.empty()) return false;
  *out = v;
  return true;
}

// Digits at text[pos, pos+n) as an int, or -1.
int Digits(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

bool ParseDate(std::string_view text, task::Date* out) {
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') return false;
  int y = Digits(text, 0, 4), m = Digits(text, 5, 2), d = Digits(text, 8, 2);
  if (y < 0 || m < 1 || m > 12 || d < 1 || d > 31) return false;
  *out = {y, m, d};
  return true;
}

// "yyyy-MM-dd[ T]HH:mm[:ss[.fff…]][Z|±hh[[:]mm]]", or bare "yyyy-MM-dd";
// without an offset the civil time is read in `zone`.
bool ParseDateTime(std::string_view text, const cctz::time_zone& zone, int64_t* epoch_ms) {
  task::Date date;
  if (!ParseDate(text, &date)) return false;
  int h = 0, mi = 0, s = 0, ms = 0;
  size_t pos = 10;
  if (pos < text.size()) {
    if (text[pos] != ' ' && text[pos] != 'T') return false;
    h = Digits(text, pos + 1, 2);
    mi = Digits(text, pos + 4, 2);
    if (h < 0 || mi < 0 || text.size() < pos + 6 || text[pos + 3] != ':') return false;
    pos += 6;
    if (pos < text.size() && text[pos] == ':') {
      s = Digits(text, pos + 1, 2);
      if (s < 0) return false;
      pos += 3;
    }
    if (pos < text.size() && text[pos] == '.') {
      size_t start = ++pos;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
      std::string frac(text.substr(start, pos - start));
      frac = (frac + "000").substr(0, 3);
      ms = Digits(frac, 0, 3);
    }
  }
  std::optional<int> offset_s;
  if (pos < text.size()) {
    char sign = text[pos];
    if (sign == 'Z' && pos + 1 == text.size()) {
      offset_s = 0;
    } else if (sign == '+' || sign == '-') {
      int oh = Digits(text, pos + 1, 2), om = 0;
      size_t rest = pos + 3;
      if (rest < text.size() && text[rest] == ':') ++rest;
      if (rest < text.size()) om = Digits(text, rest, 2), rest += 2;
      if (oh < 0 || om < 0 || rest != text.size()) return false;
      offset_s = (sign == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    } else {
      return false;
    }
  }
  int64_t seconds = 0;
  if (offset_s) {
    seconds = task::DaysFromCivil(date.year, date.month, date.day) * 86400 + h * 3600 + mi * 60 +
              s - *offset_s;
  } else {
    auto tp = zone.lookup(cctz::civil_second(date.year, date.month, date.day, h, mi, s)).pre;
    seconds = std::chrono::duration_cast<std::chrono::seconds>(tp.time_since_epoch()).count();
  }
  *epoch_ms = seconds * 1000 + ms;
  return true;
}

// Caches loaded zones: cctz loads tzdata from disk each time otherwise.
const cctz::time_zone& Zone(const std::string& name) {
  thread_local std::map<std::string, cctz::time_zone> zones;
  auto it = zones.find(name);
  if (it == zones.end()) {
    cctz::time_zone tz;
    if (!cctz::load_time_zone(name, &tz)) tz = cctz::utc_time_zone();
    it = zones.emplace(name, tz).first;
  }
  return it->second;
}

// Bytes of a value quoted in an error message, and of a column key.
constexpr size_t kMaxQuotedBytes = 64;
constexpr size_t kMaxKeyBytes = 128;

// The replica's text is quoted through utf8::Excerpt: it may be any bytes,
// and the message is stored and sent as JSON.
Status BadValue(const task::Column& column, std::string_view text) {
  return InvalidArgument("column " + utf8::Excerpt(column.key, kMaxKeyBytes) + ": value \"" +
                         utf8::Excerpt(text, kMaxQuotedBytes) + "\" is not a " +
                         std::string(task::ToString(column.type)));
}

// The JSON a key travels as to the callback: numbers stay numbers. A key
// that is not UTF-8 travels repaired (U+FFFD), so it finds nothing and its
// enriched cells stay blank: JSON cannot carry it as it is.
json KeyJson(const task::Column& column, const std::optional<std::string>& text) {
  if (!text) return nullptr;
  int64_t v = 0;
  if (column.type == task::ColumnType::kInteger && ParseInt(*text, &v)) return v;
  return utf8::MakeValid(*text);
}

struct ColumnPlan {
  ContractColumn contract;
  int result_index = -1;  // -1 for enriched columns
};

// Enriched values of the keys recent pages asked about, so a key repeated
// across pages is looked up once per attempt. Bounded: emptied when the next
// page might not fit, so memory stays flat in the row count. Where keys do
// not repeat (one order per customer) it only costs: after the first pages
// have shown that, it keeps one page's answers only.
constexpr size_t kEnrichCacheKeys = 20000;
constexpr size_t kEnrichProbePages = 5;  // pages of keys asked before judging the cache
// A page asking fewer than twice this many keys asks them in one statement.
constexpr size_t kEnrichMinKeysPerStatement = 100;

class EnrichCache {
 public:
  explicit EnrichCache(size_t batch_size) : probe_keys_(kEnrichProbePages * batch_size) {}

  // Call before a page's lookups: afterwards, Put never evicts.
  void BeginPage(size_t keys) {
    if (useful_ && asked_ >= probe_keys_ && hits_ * 16 < asked_) useful_ = false;
    if (!useful_ || values_.size() + keys > kEnrichCacheKeys) values_.clear();
  }
  // Whether a page's key is known already (counted for the judgement).
  bool Known(const std::string& key) {
    ++asked_;
    if (values_.count(key) == 0) return false;
    ++hits_;
    return true;
  }
  const std::vector<task::CellValue>* Find(const std::string& key) const {
    auto it = values_.find(key);
    return it == values_.end() ? nullptr : &it->second;
  }
  void Put(const std::string& key, std::vector<task::CellValue> values) {
    values_[key] = std::move(values);
  }

 private:
  std::unordered_map<std::string, std::vector<task::CellValue>> values_;
  const size_t probe_keys_;
  bool useful_ = true;
  size_t asked_ = 0;
  size_t hits_ = 0;
};

struct EnrichGroupPlan {
  EnrichSqlDef def;
  int key_index = -1;           // main result column of the key
  std::vector<size_t> targets;  // output column indexes it fills
};

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
  sql_template::RenderOptions EnrichRenderOptions() const;
  StatusOr<std::string> RecordedContractVersion();
  Status ResolveColumns(const std::vector<std::string>& result_columns);
  Status PlanEnrichment();
  Status PlanPaging(const QueryDescription& description);
  StatusOr<std::vector<std::string>> DeclaredUniqueKey(
      const std::vector<std::string>& labels) const;
  Status CheckCounts();
  StatusOr<int64_t> DerivedCount(std::vector<bool>* nullable = nullptr);
  StatusOr<Page> FetchPage();
  // A page's rows and whether the database had more after them.
  struct Fetched {
    ResultSet raw;
    bool has_more = false;
  };
  StatusOr<Fetched> ReadPage();
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
  Status Enrich(const ResultSet& raw, std::vector<task::Row>* rows);
  Status EnrichByCallback(const ResultSet& raw, std::vector<task::Row>* rows);
  StatusOr<std::vector<task::CellValue>> CallbackValues(const json& extra);
  Status EnrichBySql(const ResultSet& raw, std::vector<task::Row>* rows);
  Status EnrichGroup(size_t group, const ResultSet& raw, std::vector<task::Row>* rows);
  StatusOr<std::vector<ResultSet>> QueryEnrichSql(const EnrichGroupPlan& g, json keys);
  StatusOr<ResultSet> RunEnrichSql(const EnrichGroupPlan& g, json keys) const;
  Status RememberEnriched(const EnrichGroupPlan& g, const std::vector<ResultSet>& answers,
                          const std::vector<std::string>& asked, EnrichCache* cache);
  void FillEnriched(const ResultSet& raw, int key_index, const std::vector<size_t>& targets,
                    const EnrichCache& cache, std::vector<task::Row>* rows) const;
  Status EnrichFailed(const std::vector<size_t>& targets, const Status& cause);
  Status CheckFinalCount();
  Status Terminal(task::TaskState state, Status status) {
    terminal_state_ = state;
    return status;
  }
  Status Unsafe(const sql_template::UnsafeDollar& unsafe, const std::string& where);

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
  int callback_key_index_ = -1;
  std::vector<size_t> callback_targets_;
  std::vector<EnrichGroupPlan> groups_;
  EnrichCache callback_cache_{static_cast<size_t>(options_.batch_size)};
  std::vector<EnrichCache> group_caches_;  // one per group
  int64_t total_ = 0;
  int64_t offset_ = 0;
  bool prepared_ = false;
  bool done_ = false;
  bool warned_enrich_ = false;
  std::optional<task::TaskState> terminal_state_;
  std::optional<std::string> failure_code_;
  std::shared_ptr<const std::string> excel_template_;  // EXCEL_TEMPLATE contracts only
  // The page statements, one page ahead of conversion and enrichment
  // (docs/sql-template-route.md#paging). After Prepare the paging state
  // above — keyset_, boundary_*, order_by_every_column_, db_offset_,
  // skip_once_, rows_read_ — belongs to its worker; the rest to the caller.
  // Declared last: destroyed first, so a statement in flight ends before
  // the members it reads.
  int64_t rows_read_ = 0;  // rows the page statements have delivered so far
  std::optional<ReadAhead<Fetched>> page_reader_;
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
  return Status::Ok();
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
  for (const auto& term : order_) order_index_.push_back(result_index_.at(Lower(term.column)));
  spdlog::info("sql-template taskId={} queryId={}: paging by key ({}), order {}", options_.task_id,
               options_.query_id, origin, FormatOrderBy(order_));
  return Status::Ok();
}

StatusOr<std::vector<std::string>> SqlTemplateSource::DeclaredUniqueKey(
    const std::vector<std::string>& labels) const {
  std::vector<std::string> key;
  for (const auto& column : contract_.unique_key) {
    auto it = std::find_if(labels.begin(), labels.end(),
                           [&](const std::string& l) { return Lower(l) == Lower(column); });
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
// SQL included, before any of them runs. An enrich SQL also may not put the
// page's key values into ${}: they are business data, which users type too.
Status SqlTemplateSource::CheckDollars() {
  auto found = sql_template::FindUnsafeDollar(contract_.sql_template, render_options_.untrusted);
  if (!found.ok()) return found.status().WithContext("rendering the contract's sqlTemplate");
  if (*found) return Unsafe(**found, "sqlTemplate");
  const sql_template::RenderOptions enrich = EnrichRenderOptions();
  for (const auto& def : contract_.enrich_sqls) {
    auto in_group = sql_template::FindUnsafeDollar(def.sql, enrich.untrusted);
    if (!in_group.ok()) return in_group.status().WithContext("enrich group " + def.group);
    if (*in_group) return Unsafe(**in_group, "enrich group " + def.group);
  }
  return Status::Ok();
}

sql_template::RenderOptions SqlTemplateSource::EnrichRenderOptions() const {
  sql_template::RenderOptions options = render_options_;
  options.untrusted.insert("keys");
  return options;
}

// Permanent and loud: the contract, not this task, is at fault, and it would
// have let a user's text into the SQL.
Status SqlTemplateSource::Unsafe(const sql_template::UnsafeDollar& unsafe,
                                 const std::string& where) {
  failure_code_ = kUnsafeTemplateCode;
  std::string message = "unsafe template (" + where + "): " + unsafe.Message();
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
    result_index_.emplace(Lower(result_columns[i]), static_cast<int>(i));
  }
  for (const auto& c : contract_.columns) {
    ColumnPlan p{c, -1};
    if (!c.enrich) {
      auto it = result_index_.find(Lower(c.column.key));
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

// docs/sql-template-route.md#enrichment: SQL mode when enrichSqls are given
// (every marked column must be covered by a group), else callback mode with
// one key column.
Status SqlTemplateSource::PlanEnrichment() {
  std::vector<size_t> marked;
  for (size_t i = 0; i < plan_.size(); ++i) {
    if (plan_[i].contract.enrich) marked.push_back(i);
  }
  if (marked.empty()) return Status::Ok();
  if (!contract_.enrich_sqls.empty()) {
    std::set<size_t> covered;
    for (const auto& def : contract_.enrich_sqls) {
      EnrichGroupPlan g{def, -1, {}};
      auto key = result_index_.find(Lower(def.key_column));
      if (key == result_index_.end()) {
        return InvalidArgument("enrich group " + def.group + ": keyColumn " + def.key_column +
                               " is not in the query result");
      }
      g.key_index = key->second;
      for (const auto& col : def.columns) {
        auto it = std::find_if(marked.begin(), marked.end(),
                               [&](size_t i) { return plan_[i].contract.column.key == col; });
        if (it == marked.end()) {
          return InvalidArgument("enrich group " + def.group + " fills " + col +
                                 ", which is not a column marked enrich");
        }
        g.targets.push_back(*it);
        covered.insert(*it);
      }
      groups_.push_back(std::move(g));
      group_caches_.emplace_back(static_cast<size_t>(options_.batch_size));
    }
    for (size_t i : marked) {
      if (!covered.count(i)) {
        return InvalidArgument("configuration error: enriched column " +
                               plan_[i].contract.column.key + " is covered by no enrichSqls group");
      }
    }
    return Status::Ok();
  }
  if (!contract_.need_enrich) {
    return InvalidArgument(
        "configuration error: columns are marked enrich but the contract "
        "declares neither needEnrich nor enrichSqls");
  }
  for (const auto& p : plan_) {
    if (!p.contract.key_column) continue;
    if (callback_key_index_ >= 0 || p.result_index < 0) {
      return InvalidArgument(
          "configuration error: callback enrichment needs exactly one "
          "keyColumn that the query returns");
    }
    callback_key_index_ = p.result_index;
  }
  if (callback_key_index_ < 0) {
    return InvalidArgument("configuration error: callback enrichment needs a keyColumn");
  }
  callback_targets_ = marked;
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
      !ParseInt(*rs.rows[0][0], &n)) {
    return Internal("derived COUNT(*) returned no number");
  }
  if (nullable == nullptr) return n;
  nullable->assign(order_.size(), true);
  for (size_t i = 0; i < order_.size(); ++i) {
    int64_t non_null = 0;
    if (rs.rows[0][i + 1] && ParseInt(*rs.rows[0][i + 1], &non_null))
      (*nullable)[i] = non_null != n;
  }
  return n;
}

// docs/sql-template-route.md#consistency-checks, check 3: the platform's own
// count of the template against the business list count, re-checked once
// after a back-off for replica lag.
Status SqlTemplateSource::CheckCounts() {
  EC_ASSIGN_OR_RETURN(total_, DerivedCount(&nullable_));
  if (contract_.support_count_for_list) {
    EC_ASSIGN_OR_RETURN(int64_t list, client_->CountForList(params_));
    if (list != total_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.count_recheck_backoff_ms));
      EC_ASSIGN_OR_RETURN(total_, DerivedCount(&nullable_));
      EC_ASSIGN_OR_RETURN(list, client_->CountForList(params_));
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

// The page statement of page k+1 runs on page_reader_'s worker while page k
// is converted and enriched here: the replica answers the one while the
// center (and, in SQL mode, the replica again) works on the other. The next
// statement starts only after a page that has more and was read without
// error, so a caller that stops (cancel, lease, size cap) leaves at most that
// one statement to finish.
StatusOr<Page> SqlTemplateSource::FetchPage() {
  if (!page_reader_) {
    page_reader_.emplace([this] { return ReadPage(); });
    page_reader_->Start();
  }
  EC_ASSIGN_OR_RETURN(Fetched fetched, page_reader_->Take());
  if (fetched.has_more) page_reader_->Start();
  ResultSet& raw = fetched.raw;
  Page page;
  page.has_more = fetched.has_more;
  page.rows.reserve(raw.rows.size());
  for (size_t i = 0; i < raw.rows.size(); ++i) {
    EC_ASSIGN_OR_RETURN(task::Row row,
                        ConvertRow(raw.rows[i], offset_ + static_cast<int64_t>(i) + 1));
    page.rows.push_back(std::move(row));
  }
  EC_RETURN_IF_ERROR(Enrich(raw, &page.rows));
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

StatusOr<SqlTemplateSource::Fetched> SqlTemplateSource::FetchOffsetRows() {
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
  sql += " LIMIT ? OFFSET ?";
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
    // the exported total may still match: counting again tells.
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

Status SqlTemplateSource::Enrich(const ResultSet& raw, std::vector<task::Row>* rows) {
  if (rows->empty()) return Status::Ok();
  if (!groups_.empty()) return EnrichBySql(raw, rows);
  if (!callback_targets_.empty()) return EnrichByCallback(raw, rows);
  return Status::Ok();
}

// Critical columns fail the task; the others stay blank with one warning.
Status SqlTemplateSource::EnrichFailed(const std::vector<size_t>& targets, const Status& cause) {
  for (size_t i : targets) {
    if (plan_[i].contract.critical) {
      return InvalidArgument("enrichment of critical column " + plan_[i].contract.column.key +
                             " failed: " + cause.message());
    }
  }
  if (!warned_enrich_) {
    warned_enrich_ = true;
    spdlog::warn(
        "ALERT: sql-template enrichment failed taskId={} queryId={}; non-critical "
        "cells are left blank: {}",
        options_.task_id, options_.query_id, cause.ToString());
  }
  return Status::Ok();
}

Status SqlTemplateSource::EnrichByCallback(const ResultSet& raw, std::vector<task::Row>* rows) {
  const task::Column* key_column = nullptr;
  for (const auto& p : plan_) {
    if (p.result_index == callback_key_index_) key_column = &p.contract.column;
  }
  callback_cache_.BeginPage(raw.rows.size());
  EnrichRequest request;
  request.parameters = params_;
  for (const auto& p : plan_) {
    if (p.contract.key_column) request.key_column = p.contract.column.key;
  }
  for (size_t i : callback_targets_) request.columns.push_back(plan_[i].contract.column.key);
  // One call per page, for the keys no earlier page asked about.
  std::vector<std::string> asked;
  std::unordered_set<std::string> seen;
  for (const auto& r : raw.rows) {
    const auto& key = r[callback_key_index_];
    if (!key || !seen.insert(*key).second || callback_cache_.Known(*key)) continue;
    asked.push_back(*key);
    request.keys.push_back(KeyJson(*key_column, key));
  }
  if (!request.keys.empty()) {
    auto results = client_->Enrich(request);
    if (!results.ok()) {
      // The keys asked for stay blank; keys known from earlier pages still fill.
      EC_RETURN_IF_ERROR(EnrichFailed(callback_targets_, results.status()));
    } else {
      for (size_t k = 0; k < asked.size(); ++k) {
        EC_ASSIGN_OR_RETURN(std::vector<task::CellValue> values, CallbackValues((*results)[k]));
        callback_cache_.Put(asked[k], std::move(values));
      }
    }
  }
  FillEnriched(raw, callback_key_index_, callback_targets_, callback_cache_, rows);
  return Status::Ok();
}

// One callback answer as the values of the enriched columns; a value that
// does not parse is blank (or fails the task, for a critical column).
StatusOr<std::vector<task::CellValue>> SqlTemplateSource::CallbackValues(const json& extra) {
  std::vector<task::CellValue> values(callback_targets_.size());
  if (!extra.is_object()) return values;
  for (size_t t = 0; t < callback_targets_.size(); ++t) {
    const task::Column& column = plan_[callback_targets_[t]].contract.column;
    auto it = extra.find(column.key);
    if (it == extra.end()) continue;
    auto v = task::ParseWireValue(column, *it);
    if (!v.ok()) {
      EC_RETURN_IF_ERROR(EnrichFailed({callback_targets_[t]}, v.status()));
      continue;
    }
    values[t] = std::move(v).value();
  }
  return values;
}

void SqlTemplateSource::FillEnriched(const ResultSet& raw, int key_index,
                                     const std::vector<size_t>& targets, const EnrichCache& cache,
                                     std::vector<task::Row>* rows) const {
  for (size_t r = 0; r < rows->size(); ++r) {
    const auto& key = raw.rows[r][key_index];
    const std::vector<task::CellValue>* values = key ? cache.Find(*key) : nullptr;
    if (values == nullptr) continue;
    for (size_t t = 0; t < targets.size(); ++t) (*rows)[r][targets[t]] = (*values)[t];
  }
}

Status SqlTemplateSource::EnrichBySql(const ResultSet& raw, std::vector<task::Row>* rows) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    Status s = EnrichGroup(g, raw, rows);
    if (!s.ok()) EC_RETURN_IF_ERROR(EnrichFailed(groups_[g].targets, s));
  }
  return Status::Ok();
}

// The enrich SQL of one page and group, for the keys no earlier page asked
// about. A key the SQL does not return is remembered as blank, like a LEFT
// JOIN.
Status SqlTemplateSource::EnrichGroup(size_t group, const ResultSet& raw,
                                      std::vector<task::Row>* rows) {
  const EnrichGroupPlan& g = groups_[group];
  EnrichCache& cache = group_caches_[group];
  cache.BeginPage(raw.rows.size());
  const task::Column* key_column = nullptr;
  for (const auto& p : plan_) {
    if (p.result_index == g.key_index) key_column = &p.contract.column;
  }
  task::Column text_column;
  text_column.key = g.def.key_column;
  json keys = json::array();
  std::vector<std::string> asked;
  std::unordered_set<std::string> seen;
  for (const auto& r : raw.rows) {
    const auto& key = r[g.key_index];
    if (!key || !seen.insert(*key).second || cache.Known(*key)) continue;
    asked.push_back(*key);
    keys.push_back(KeyJson(key_column ? *key_column : text_column, key));
  }
  if (!asked.empty()) {
    EC_ASSIGN_OR_RETURN(std::vector<ResultSet> answers, QueryEnrichSql(g, std::move(keys)));
    EC_RETURN_IF_ERROR(RememberEnriched(g, answers, asked, &cache));
  }
  FillEnriched(raw, g.key_index, g.targets, cache, rows);
  return Status::Ok();
}

// Most of an enriched page's time is the replica looking the keys up —
// on MariaDB two index descents per key, about 6 µs each, 6 ms a page —
// while the page statement and the writer wait for it. So a page's keys
// are asked in two halves at once, on two pooled connections: the lookup
// takes a second replica core where one is idle. A half is still hundreds
// of keys, so the extra statement costs little, and so does the thread
// started for it (tens of µs against milliseconds of lookup). Only while
// no other lookup of this process runs, though: with several exports at
// once the cores are busy anyway, and halves would only add statements.
StatusOr<std::vector<ResultSet>> SqlTemplateSource::QueryEnrichSql(const EnrichGroupPlan& g,
                                                                   json keys) {
  static std::atomic<int> lookups_in_flight{0};
  const bool alone = lookups_in_flight.fetch_add(1) == 0;
  struct Done {
    ~Done() { lookups_in_flight.fetch_sub(1); }
  } done;
  const size_t parts = alone && keys.size() >= 2 * kEnrichMinKeysPerStatement ? 2 : 1;
  std::vector<json> halves(parts, json::array());
  for (size_t i = 0; i < keys.size(); ++i) halves[i * parts / keys.size()].push_back(keys[i]);
  std::vector<StatusOr<ResultSet>> answers(parts, Internal("not asked"));
  std::optional<std::thread> second;
  if (parts == 2) {
    second = StartWorkerThread("enrich", [&] {
      answers[1] = RunGuardedOnce("enrich", [&] { return RunEnrichSql(g, std::move(halves[1])); });
    });
  }
  answers[0] = RunEnrichSql(g, std::move(halves[0]));
  if (second) second->join();
  std::vector<ResultSet> out;
  for (auto& answer : answers) {
    if (!answer.ok()) return answer.status();
    out.push_back(std::move(answer).value());
  }
  return out;
}

// One enrich SQL statement for `keys`. Reads only what Prepare settled, so
// two run at once.
StatusOr<ResultSet> SqlTemplateSource::RunEnrichSql(const EnrichGroupPlan& g, json keys) const {
  json params = params_;
  params["keys"] = std::move(keys);
  auto rendered = sql_template::RenderTemplate(g.def.sql, params, EnrichRenderOptions());
  if (!rendered.ok()) return rendered.status().WithContext("enrich group " + g.def.group);
  EC_RETURN_IF_ERROR(sql_template::ScanSql(rendered->sql));
  return datasource_->Query(StripTrailingSemicolon(rendered->sql), rendered->bindings,
                            contract_.schema);
}

Status SqlTemplateSource::RememberEnriched(const EnrichGroupPlan& g,
                                           const std::vector<ResultSet>& answers,
                                           const std::vector<std::string>& asked,
                                           EnrichCache* cache) {
  std::unordered_map<std::string, const std::vector<std::optional<std::string>>*> by_key;
  std::vector<int> target_columns;
  for (const ResultSet& rs : answers) {
    std::map<std::string, int> label;
    for (size_t i = 0; i < rs.columns.size(); ++i) {
      label.emplace(Lower(rs.columns[i]), static_cast<int>(i));
    }
    auto key_it = label.find(Lower(g.def.key_column));
    if (key_it == label.end()) {
      return InvalidArgument("enrich group " + g.def.group + " does not return " +
                             g.def.key_column);
    }
    std::vector<int> columns;
    for (size_t i : g.targets) {
      auto col = label.find(Lower(plan_[i].contract.column.key));
      if (col == label.end()) {
        return InvalidArgument("enrich group " + g.def.group + " does not return " +
                               plan_[i].contract.column.key);
      }
      columns.push_back(col->second);
    }
    if (!target_columns.empty() && columns != target_columns) {
      return InvalidArgument("enrich group " + g.def.group +
                             " returned its columns in different orders");
    }
    target_columns = std::move(columns);
    for (const auto& r : rs.rows) {
      if (r[key_it->second]) by_key.emplace(*r[key_it->second], &r);
    }
  }
  for (const auto& key : asked) {
    std::vector<task::CellValue> values(g.targets.size());
    auto hit = by_key.find(key);
    for (size_t t = 0; hit != by_key.end() && t < g.targets.size(); ++t) {
      EC_ASSIGN_OR_RETURN(values[t],
                          ParseDatabaseValue(plan_[g.targets[t]].contract.column,
                                             (*hit->second)[target_columns[t]], options_.timezone));
    }
    cache->Put(key, std::move(values));
  }
  return Status::Ok();
}

bool InAllowedList(const std::string& text, const registry::ParameterSpec& spec) {
  return std::find(spec.allowed.begin(), spec.allowed.end(), text) != spec.allowed.end();
}

// A value whose text cannot carry SQL: see UntrustedParameters.
bool IsHarmless(const json& value, const registry::ParameterSpec* spec) {
  if (value.is_null() || value.is_boolean() || value.is_number()) return true;
  if (value.is_array()) {
    return std::all_of(value.begin(), value.end(),
                       [&](const json& e) { return !e.is_array() && IsHarmless(e, spec); });
  }
  if (!value.is_string() || spec == nullptr) return false;
  const std::string& text = value.get_ref<const std::string&>();
  if (!spec->allowed.empty()) return InAllowedList(text, *spec);
  task::Date date;
  return spec->type == "DATE" && text.size() == 10 && ParseDate(text, &date);
}

// A declared parameter a user may fill with any text.
bool IsFreeText(const registry::ParameterSpec& spec) {
  return spec.allowed.empty() && (spec.type == "STRING" || spec.type == "STRING_LIST");
}

}  // namespace

std::set<std::string> UntrustedParameters(const json& task_parameters,
                                          const std::vector<registry::ParameterSpec>& specs) {
  std::set<std::string> untrusted;
  std::map<std::string, const registry::ParameterSpec*> by_name;
  for (const auto& spec : specs) {
    by_name[spec.name] = &spec;
    if (IsFreeText(spec)) untrusted.insert(spec.name);
  }
  if (task_parameters.is_object()) {
    for (const auto& [key, value] : task_parameters.items()) {
      auto spec = by_name.find(key);
      if (!IsHarmless(value, spec == by_name.end() ? nullptr : spec->second)) untrusted.insert(key);
    }
  }
  for (const char* server_bound : {"tenantId", "appCode", "requestedBy"}) {
    untrusted.erase(server_bound);
  }
  return untrusted;
}

StatusOr<json> TemplateParameters(const std::string& parameters_json, const std::string& tenant_id,
                                  task::AppCode app_code, const std::string& requested_by) {
  json params = json::parse(parameters_json.empty() ? "{}" : parameters_json, nullptr, false);
  if (params.is_discarded() || !params.is_object()) {
    return InvalidArgument("task parameters are not a JSON object");
  }
  // Server-side identity wins: a user must not choose the tenant a query reads.
  params["tenantId"] = tenant_id;
  params["appCode"] = std::string(task::ToString(app_code));
  params["requestedBy"] = requested_by;
  return params;
}

StatusOr<task::CellValue> ParseDatabaseValue(const task::Column& column,
                                             const std::optional<std::string>& text,
                                             const std::string& timezone) {
  if (!text) return task::CellValue{};
  const std::string& t = *text;
  switch (column.type) {
    case task::ColumnType::kString:
      return task::CellValue{t};
    case task::ColumnType::kInteger: {
      int64_t v = 0;
      if (ParseInt(t, &v)) return task::CellValue{v};
      // A whole number printed as a decimal ("12.00", numeric columns).
      auto d = task::ParseDecimal(t, 0);
      if (d.ok() && ParseInt(d->digits, &v) &&
          task::ParseDecimal(t, 10)->digits == task::ParseDecimal(d->digits, 10)->digits) {
        return task::CellValue{v};
      }
      return BadValue(column, t);
    }
    case task::ColumnType::kDecimal: {
      auto d = task::ParseDecimal(t, column.scale);
      if (!d.ok()) return BadValue(column, t);
      return task::CellValue{*d};
    }
    case task::ColumnType::kBoolean: {
      std::string l = Lower(t);
      if (l == "1" || l == "t" || l == "true") return task::CellValue{true};
      if (l == "0" || l == "f" || l == "false") return task::CellValue{false};
      return BadValue(column, t);
    }
    case task::ColumnType::kDate: {
      task::Date d;
      if (!ParseDate(t, &d)) return BadValue(column, t);
      return task::CellValue{d};
    }
    case task::ColumnType::kDateTime: {
      int64_t ms = 0;
      if (ParseInt(t, &ms)) return task::CellValue{task::DateTime{ms}};  // epoch ms
      if (!ParseDateTime(t, Zone(timezone), &ms)) return BadValue(column, t);
      return task::CellValue{task::DateTime{ms}};
    }
  }
  return BadValue(column, t);
}

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
