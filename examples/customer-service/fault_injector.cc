#include "fault_injector.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "sdk/provider_server.h"

namespace customer_service {
namespace {

namespace sdk = export_center::sdk;
using nlohmann::json;

bool IsLoopback(const std::string& addr) {
  return addr == "127.0.0.1" || addr == "::1" || addr == "::ffff:127.0.0.1";
}

void Reply(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json; charset=utf-8");
}

// A field of the faults body: absent -> keep, else a non-negative integer.
bool ReadCount(const json& body, const char* name, int64_t max, int64_t* out) {
  auto it = body.find(name);
  if (it == body.end()) return true;
  if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > max) return false;
  *out = it->get<int64_t>();
  return true;
}

bool ReadFlag(const json& body, const char* name, bool* out) {
  auto it = body.find(name);
  if (it == body.end()) return true;
  if (!it->is_boolean()) return false;
  *out = it->get<bool>();
  return true;
}

// batchCell: absent -> keep, null -> none, else {"column": string, "value": any}.
bool ReadBatchCell(const json& body, json* out) {
  auto it = body.find("batchCell");
  if (it == body.end()) return true;
  if (it->is_null()) {
    *out = nullptr;
    return true;
  }
  if (!it->is_object() || !it->contains("column") || !(*it)["column"].is_string() ||
      !it->contains("value")) {
    return false;
  }
  // nested: N puts the value inside N arrays ([[…V…]]), at most 2 000 000.
  if (it->contains("nested") &&
      !((*it)["nested"].is_number_unsigned() && (*it)["nested"].get<uint64_t>() <= 2000000)) {
    return false;
  }
  *out = *it;
  return true;
}

// sqlReplace: absent -> keep, null -> none, else [{"from": non-empty, "to": string}].
bool ReadSqlReplace(const json& body, json* out) {
  auto it = body.find("sqlReplace");
  if (it == body.end()) return true;
  if (it->is_null()) {
    *out = json::array();
    return true;
  }
  if (!it->is_array()) return false;
  for (const json& r : *it) {
    if (!r.is_object() || !r.contains("from") || !r["from"].is_string() ||
        r["from"].get_ref<const std::string&>().empty() || !r.contains("to") ||
        !r["to"].is_string()) {
      return false;
    }
  }
  *out = *it;
  return true;
}

bool IsDispatch(const httplib::Request& req, const char* op) {
  return req.method == "POST" && req.path == std::string("/dispatch/") + op;
}

}  // namespace

void FaultInjector::Install(httplib::Server& server, std::string token) {
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "POST" && req.path.rfind(sdk::kBatchPathPrefix, 0) == 0 && BeforeBatch(res)) {
      return httplib::Server::HandlerResponse::Handled;
    }
    if (IsDispatch(req, "enrich") && BeforeEnrich(res)) {
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (IsDispatch(req, "sql") && res.status == 200) AfterSql(res);
    if (req.method == "POST" && req.path.rfind(sdk::kBatchPathPrefix, 0) == 0 &&
        res.status == 200) {
      AfterBatch(res);
    }
  });
  auto guard = [token](const httplib::Request& req, httplib::Response& res) {
    if (!IsLoopback(req.remote_addr)) {
      Reply(res, 403, sdk::ErrorEnvelope(403, "admin endpoints are loopback only"));
      return false;
    }
    if (!sdk::TokenMatches(token, req.get_header_value(sdk::kTokenHeader))) {
      Reply(res, 401, sdk::ErrorEnvelope(401, "invalid internal service token"));
      return false;
    }
    return true;
  };
  server.Post("/admin/faults", [this, guard](const httplib::Request& req, httplib::Response& res) {
    if (guard(req, res)) SetFaults(req, res);
  });
  server.Get("/admin/stats", [this, guard](const httplib::Request& req, httplib::Response& res) {
    if (guard(req, res)) Stats(res);
  });
}

bool FaultInjector::BeforeBatch(httplib::Response& res) {
  int64_t sleep_ms = 0;
  {
    std::lock_guard lock(mu_);
    ++batch_calls_;
    if (fail503_ > 0) {
      --fail503_;
      Reply(res, 503, sdk::ErrorEnvelope(503, "injected fault: service unavailable"));
      return true;
    }
    if (hang_count_ > 0) {
      --hang_count_;
      sleep_ms = hang_ms_;
    }
  }
  // Sleep outside the lock so other calls and /admin/stats stay responsive.
  if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  return false;
}

bool FaultInjector::BeforeEnrich(httplib::Response& res) {
  int64_t sleep_ms = 0;
  {
    std::lock_guard lock(mu_);
    if (enrich_fail_ > 0) {
      --enrich_fail_;
      Reply(res, 500, sdk::ErrorEnvelope(500, "injected fault: enrichment unavailable"));
      return true;
    }
    if (hang_count_ > 0) {
      --hang_count_;
      sleep_ms = hang_ms_;
    }
  }
  // The sql-template route calls enrich once per page: a hang here holds the
  // export between two pages, which is where tests change the data.
  if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  return false;
}

void FaultInjector::AfterSql(httplib::Response& res) {
  bool critical = false, broken = false;
  json replace;
  {
    std::lock_guard lock(mu_);
    critical = critical_enrich_;
    broken = broken_enrich_sql_;
    replace = sql_replace_;
  }
  if (!critical && !broken && replace.empty()) return;
  json body = json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.contains("data") || !body["data"].is_object()) return;
  json& data = body["data"];
  if (critical && data.contains("columns")) {
    for (json& column : data["columns"]) {
      if (column.value("enrich", false)) column["critical"] = true;
    }
  }
  if (broken && data.contains("enrichSqls")) {
    for (json& group : data["enrichSqls"]) {
      // Same shape, a table that does not exist: the center's query fails.
      std::string sql = group.value("sql", "");
      if (auto at = sql.find(" FROM customer"); at != std::string::npos) {
        sql.replace(at, 14, " FROM no_such_table");
      }
      group["sql"] = sql;
    }
  }
  if (data.contains("sqlTemplate") && data["sqlTemplate"].is_string()) {
    std::string sql = data["sqlTemplate"].get<std::string>();
    for (const json& r : replace) {
      const std::string from = r["from"].get<std::string>(), to = r["to"].get<std::string>();
      for (size_t at = sql.find(from); at != std::string::npos;
           at = sql.find(from, at + to.size())) {
        sql.replace(at, from.size(), to);
      }
    }
    data["sqlTemplate"] = sql;
  }
  SetBody(res, body.dump());
}

void FaultInjector::AfterBatch(httplib::Response& res) {
  json cell;
  {
    std::lock_guard lock(mu_);
    cell = batch_cell_;
  }
  if (cell.is_null()) return;
  json body = json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.contains("data") || !body["data"].is_object()) return;
  json& rows = body["data"]["rows"];
  if (!rows.is_array() || rows.empty() || !rows[0].is_object()) return;
  const uint64_t nested = cell.value("nested", uint64_t{0});
  if (nested == 0) {
    rows[0][cell["column"].get<std::string>()] = cell["value"];
    return SetBody(res, body.dump());
  }
  // Spliced in as text: a tree that deep would overflow this service's own
  // stack in dump() (docs/fuzzing.md#nesting).
  const std::string placeholder = "@nested-value@";
  rows[0][cell["column"].get<std::string>()] = placeholder;
  std::string text = body.dump();
  const std::string value =
      std::string(nested, '[') + cell["value"].dump() + std::string(nested, ']');
  text.replace(text.find("\"" + placeholder + "\""), placeholder.size() + 2, value);
  SetBody(res, std::move(text));
}

void FaultInjector::SetBody(httplib::Response& res, std::string body) {
  // httplib runs the post-routing hook after it has set Content-Length from the old body.
  res.body = std::move(body);
  res.headers.erase("Content-Length");
  res.set_header("Content-Length", std::to_string(res.body.size()));
}

void FaultInjector::SetFaults(const httplib::Request& req, httplib::Response& res) {
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return Reply(res, 400, sdk::ErrorEnvelope(400, "body must be a JSON object"));
  }
  std::lock_guard lock(mu_);
  int64_t fail = fail503_, hang_ms = hang_ms_, hang_count = hang_count_;
  int64_t enrich_fail = enrich_fail_;
  bool critical = critical_enrich_, broken = broken_enrich_sql_;
  json batch_cell = batch_cell_, sql_replace = sql_replace_;
  if (!ReadCount(body, "fail503", 1000000, &fail) || !ReadCount(body, "hangMs", 600000, &hang_ms) ||
      !ReadCount(body, "hangCount", 1000000, &hang_count) ||
      !ReadCount(body, "enrichFail", 1000000, &enrich_fail) ||
      !ReadFlag(body, "criticalEnrich", &critical) || !ReadFlag(body, "brokenEnrichSql", &broken) ||
      !ReadBatchCell(body, &batch_cell) || !ReadSqlReplace(body, &sql_replace)) {
    return Reply(res, 400,
                 sdk::ErrorEnvelope(400,
                                    "fail503, hangMs, hangCount, enrichFail: non-negative "
                                    "integers; criticalEnrich, brokenEnrichSql: booleans; "
                                    "batchCell: {column, value} or null; sqlReplace: "
                                    "[{from, to}] strings"));
  }
  fail503_ = fail;
  hang_ms_ = hang_ms;
  hang_count_ = hang_count;
  enrich_fail_ = enrich_fail;
  critical_enrich_ = critical;
  broken_enrich_sql_ = broken;
  batch_cell_ = std::move(batch_cell);
  sql_replace_ = std::move(sql_replace);
  Reply(res, 200, json{{"code", "200"}, {"message", "success"}, {"data", nullptr}}.dump());
}

void FaultInjector::Stats(httplib::Response& res) {
  std::lock_guard lock(mu_);
  json data = {{"batchCalls", batch_calls_},           {"fail503Pending", fail503_},
               {"hangPending", hang_count_},           {"hangMs", hang_ms_},
               {"enrichFailPending", enrich_fail_},    {"criticalEnrich", critical_enrich_},
               {"brokenEnrichSql", broken_enrich_sql_}};
  Reply(res, 200, json{{"code", "200"}, {"message", "success"}, {"data", data}}.dump());
}

}  // namespace customer_service
