#include "source/sql/enrichment.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/ascii.h"
#include "common/thread_guard.h"
#include "common/utf8.h"
#include "source/sql/database_value.h"
#include "source/sql/sql_template/sql_scanner.h"
#include "source/sql/sql_template/sql_template.h"
#include "source/sql/template_safety.h"

namespace export_center::source {
namespace {

using nlohmann::json;

// The JSON a key travels as to the callback: numbers stay numbers. A key
// that is not UTF-8 travels repaired (U+FFFD), so it finds nothing and its
// enriched cells stay blank: JSON cannot carry it as it is.
json KeyJson(const task::Column& column, const std::optional<std::string>& text) {
  if (!text) return nullptr;
  int64_t v = 0;
  if (column.type == task::ColumnType::kInteger && ParseDatabaseInt(*text, &v)) return v;
  return utf8::MakeValid(*text);
}

}  // namespace

// Enriched values of the keys recent pages asked about, so a key repeated
// across pages is looked up once per attempt. Bounded: emptied when the next
// page might not fit, so memory stays flat in the row count. Where keys do
// not repeat (one order per customer) it only costs: after the first pages
// have shown that, it keeps one page's answers only.
constexpr size_t kEnrichCacheKeys = 20000;
constexpr size_t kEnrichProbePages = 5;  // pages of keys asked before judging the cache
// A page asking fewer than twice this many keys asks them in one statement.
constexpr size_t kEnrichMinKeysPerStatement = 100;

class Enrichment::Cache {
 public:
  explicit Cache(size_t batch_size) : probe_keys_(kEnrichProbePages * batch_size) {}

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

struct Enrichment::GroupPlan {
  EnrichSqlDef def;
  int key_index = -1;           // main result column of the key
  std::vector<size_t> targets;  // output column indexes it fills
};

Enrichment::Enrichment(std::vector<ColumnPlan> plan, Context context, SqlContractClient* client,
                       ReadOnlyDatasource* datasource, std::string schema)
    : plan_(std::move(plan)),
      context_(std::move(context)),
      client_(client),
      datasource_(datasource),
      schema_(std::move(schema)),
      enrich_untrusted_(EnrichUntrusted(context_.untrusted)),
      callback_cache_(std::make_unique<Cache>(static_cast<size_t>(context_.batch_size))) {}

Enrichment::~Enrichment() = default;

StatusOr<std::unique_ptr<Enrichment>> Enrichment::Plan(
    const SqlContract& contract, std::vector<ColumnPlan> plan,
    const std::map<std::string, int>& result_index, Context context, SqlContractClient* client,
    ReadOnlyDatasource* datasource) {
  std::unique_ptr<Enrichment> enrichment(
      new Enrichment(std::move(plan), std::move(context), client, datasource, contract.schema));
  EC_RETURN_IF_ERROR(enrichment->PlanGroups(contract, result_index));
  return enrichment;
}

// docs/sql-template-route.md#enrichment: SQL mode when enrichSqls are given
// (every marked column must be covered by a group), else callback mode with
// one key column.
Status Enrichment::PlanGroups(const SqlContract& contract,
                              const std::map<std::string, int>& result_index) {
  std::vector<size_t> marked;
  for (size_t i = 0; i < plan_.size(); ++i) {
    if (plan_[i].contract.enrich) marked.push_back(i);
  }
  if (marked.empty()) return Status::Ok();
  if (!contract.enrich_sqls.empty()) {
    std::set<size_t> covered;
    for (const auto& def : contract.enrich_sqls) {
      GroupPlan g{def, -1, {}};
      auto key = result_index.find(ToLowerAscii(def.key_column));
      if (key == result_index.end()) {
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
      group_caches_.emplace_back(static_cast<size_t>(context_.batch_size));
    }
    for (size_t i : marked) {
      if (!covered.count(i)) {
        return InvalidArgument("configuration error: enriched column " +
                               plan_[i].contract.column.key + " is covered by no enrichSqls group");
      }
    }
    return Status::Ok();
  }
  if (!contract.need_enrich) {
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

StatusOr<Enrichment::PageCells> Enrichment::Lookup(const ResultSet& raw) {
  if (raw.rows.empty()) return PageCells{};
  if (!groups_.empty()) return LookUpBySql(raw);
  if (!callback_targets_.empty()) return LookUpByCallback(raw);
  return PageCells{};
}

void Enrichment::Fill(PageCells cells, std::vector<task::Row>* rows) {
  for (auto& part : cells.parts) {
    const size_t width = part.targets.size();
    for (size_t r = 0; r < rows->size() && r < part.found.size(); ++r) {
      if (!part.found[r]) continue;
      for (size_t t = 0; t < width; ++t) {
        (*rows)[r][part.targets[t]] = std::move(part.cells[r * width + t]);
      }
    }
  }
}

// Critical columns fail the task; the others stay blank with one warning.
Status Enrichment::EnrichFailed(const std::vector<size_t>& targets, const Status& cause) {
  for (size_t i : targets) {
    if (plan_[i].contract.critical) {
      // WithContext keeps a quoted cell value recorded, for governance to take out.
      Status failed = cause.WithContext("enrichment of critical column " +
                                        plan_[i].contract.column.key + " failed");
      return failed.code() == StatusCode::kInvalidArgument ? failed
                                                           : InvalidArgument(failed.message());
    }
  }
  if (!warned_enrich_) {
    warned_enrich_ = true;
    spdlog::warn(
        "ALERT: sql-template enrichment failed taskId={} queryId={}; non-critical "
        "cells are left blank: {}",
        context_.task_id, context_.query_id, cause.ToString());
  }
  return Status::Ok();
}

StatusOr<Enrichment::PageCells> Enrichment::LookUpByCallback(const ResultSet& raw) {
  const task::Column* key_column = nullptr;
  for (const auto& p : plan_) {
    if (p.result_index == callback_key_index_) key_column = &p.contract.column;
  }
  callback_cache_->BeginPage(raw.rows.size());
  EnrichRequest request;
  request.parameters = context_.params;
  for (const auto& p : plan_) {
    if (p.contract.key_column) request.key_column = p.contract.column.key;
  }
  for (size_t i : callback_targets_) request.columns.push_back(plan_[i].contract.column.key);
  // One call per page, for the keys no earlier page asked about.
  std::vector<std::string> asked;
  std::unordered_set<std::string> seen;
  for (const auto& r : raw.rows) {
    const auto& key = r[callback_key_index_];
    if (!key || !seen.insert(*key).second || callback_cache_->Known(*key)) continue;
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
        callback_cache_->Put(asked[k], std::move(values));
      }
    }
  }
  PageCells cells;
  cells.parts.push_back(CellsOf(raw, callback_key_index_, callback_targets_, *callback_cache_));
  return cells;
}

// One callback answer as the values of the enriched columns; a value that
// does not parse is blank (or fails the task, for a critical column).
StatusOr<std::vector<task::CellValue>> Enrichment::CallbackValues(const json& extra) {
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

Enrichment::PageCells::Part Enrichment::CellsOf(const ResultSet& raw, int key_index,
                                                const std::vector<size_t>& targets,
                                                const Cache& cache) {
  // Copies, not pointers into the cache: the next page's lookup may empty
  // it while this page is filled. One allocation per page, not per row.
  PageCells::Part part{targets, std::vector<bool>(raw.rows.size()),
                       std::vector<task::CellValue>(raw.rows.size() * targets.size())};
  for (size_t r = 0; r < raw.rows.size(); ++r) {
    const auto& key = raw.rows[r][key_index];
    const std::vector<task::CellValue>* values = key ? cache.Find(*key) : nullptr;
    if (values == nullptr) continue;
    part.found[r] = true;
    std::copy_n(values->begin(), std::min(values->size(), targets.size()),
                part.cells.begin() + static_cast<std::ptrdiff_t>(r * targets.size()));
  }
  return part;
}

StatusOr<Enrichment::PageCells> Enrichment::LookUpBySql(const ResultSet& raw) {
  PageCells cells;
  for (size_t g = 0; g < groups_.size(); ++g) {
    auto part = LookUpGroup(g, raw);
    if (part.ok()) {
      cells.parts.push_back(std::move(part).value());
    } else {
      EC_RETURN_IF_ERROR(EnrichFailed(groups_[g].targets, part.status()));
    }
  }
  return cells;
}

// The enrich SQL of one page and group, for the keys no earlier page asked
// about. A key the SQL does not return is remembered as blank, like a LEFT
// JOIN.
StatusOr<Enrichment::PageCells::Part> Enrichment::LookUpGroup(size_t group, const ResultSet& raw) {
  const GroupPlan& g = groups_[group];
  Cache& cache = group_caches_[group];
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
  return CellsOf(raw, g.key_index, g.targets, cache);
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
StatusOr<std::vector<ResultSet>> Enrichment::QueryEnrichSql(const GroupPlan& g, json keys) {
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
StatusOr<ResultSet> Enrichment::RunEnrichSql(const GroupPlan& g, json keys) const {
  json params = context_.params;
  params["keys"] = std::move(keys);
  sql_template::RenderOptions options;
  options.untrusted = enrich_untrusted_;
  auto rendered = sql_template::RenderTemplate(g.def.sql, params, options);
  if (!rendered.ok()) return rendered.status().WithContext("enrich group " + g.def.group);
  EC_RETURN_IF_ERROR(sql_template::ScanSql(rendered->sql));
  return datasource_->Query(StripTrailingSemicolon(rendered->sql), rendered->bindings, schema_);
}

std::vector<Enrichment::Statement> Enrichment::StatementsFor(const ResultSet& raw) const {
  std::vector<Statement> out;
  for (const GroupPlan& g : groups_) {
    const task::Column* key_column = nullptr;
    for (const auto& p : plan_) {
      if (p.result_index == g.key_index) key_column = &p.contract.column;
    }
    task::Column text_column;
    text_column.key = g.def.key_column;
    json params = context_.params;
    params["keys"] = json::array();
    std::unordered_set<std::string> seen;
    for (const auto& r : raw.rows) {
      const auto& key = r[g.key_index];
      if (key && seen.insert(*key).second) {
        params["keys"].push_back(KeyJson(key_column ? *key_column : text_column, key));
      }
    }
    if (params["keys"].empty()) continue;
    sql_template::RenderOptions options;
    options.untrusted = enrich_untrusted_;
    auto rendered = sql_template::RenderTemplate(g.def.sql, params, options);
    if (!rendered.ok() || !sql_template::ScanSql(rendered->sql).ok()) continue;
    out.push_back({"enrich group " + g.def.group,
                   std::string(StripTrailingSemicolon(rendered->sql)),
                   std::move(rendered->bindings)});
  }
  return out;
}

Status Enrichment::RememberEnriched(const GroupPlan& g, const std::vector<ResultSet>& answers,
                                    const std::vector<std::string>& asked, Cache* cache) {
  std::unordered_map<std::string, const std::vector<std::optional<std::string>>*> by_key;
  std::vector<int> target_columns;
  for (const ResultSet& rs : answers) {
    std::map<std::string, int> label;
    for (size_t i = 0; i < rs.columns.size(); ++i) {
      label.emplace(ToLowerAscii(rs.columns[i]), static_cast<int>(i));
    }
    auto key_it = label.find(ToLowerAscii(g.def.key_column));
    if (key_it == label.end()) {
      return InvalidArgument("enrich group " + g.def.group + " does not return " +
                             g.def.key_column);
    }
    std::vector<int> columns;
    for (size_t i : g.targets) {
      auto col = label.find(ToLowerAscii(plan_[i].contract.column.key));
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
                                             (*hit->second)[target_columns[t]], context_.timezone));
    }
    cache->Put(key, std::move(values));
  }
  return Status::Ok();
}

}  // namespace export_center::source
