#include "sdk/sql_scenario.h"

#include <openssl/evp.h>

#include <exception>
#include <map>
#include <utility>

namespace export_center::sdk {
namespace {

using nlohmann::json;

void Send(httplib::Response& res, int status, std::string body) {
  res.status = status;
  res.set_content(std::move(body), "application/json; charset=utf-8");
}

void SendData(httplib::Response& res, json data) {
  Send(res, 200, json{{"code", "200"}, {"message", "success"}, {"data", std::move(data)}}.dump());
}

template <typename T>
bool SendError(httplib::Response& res, const Result<T>& r) {
  if (r.ok()) return false;
  int code = r.error().code;
  Send(res, code >= 400 && code <= 599 ? code : 500, ErrorEnvelope(code, r.error().message));
  return true;
}

std::string Base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

json ColumnToJson(const SqlColumn& c) {
  json j = ColumnsToJson({c.column})[0];
  if (c.enrich) j["enrich"] = true;
  if (c.key_column) j["keyColumn"] = true;
  if (c.critical) j["critical"] = true;
  return j;
}

Result<SqlEnrichRequest> ParseEnrichBody(const json& body) {
  SqlEnrichRequest r;
  auto keys = body.find("keys");
  if (keys == body.end() || !keys->is_array()) return ProviderError{400, "keys must be an array"};
  r.keys.assign(keys->begin(), keys->end());
  if (auto k = body.find("keyColumn"); k != body.end() && k->is_string()) r.key_column = *k;
  if (auto c = body.find("columns"); c != body.end() && c->is_array()) {
    for (const auto& col : *c) {
      if (col.is_string()) r.columns.push_back(col);
    }
  }
  if (auto p = body.find("parameters"); p != body.end() && p->is_object()) r.parameters = *p;
  return r;
}

// Runs one operation of `scenario`; every answer is an envelope.
void Dispatch(SqlScenario& scenario, const std::string& op, const json& body,
              httplib::Response& res) {
  if (op == "sql") {
    auto r = scenario.GetSqlTemplate(body);
    if (!SendError(res, r)) SendData(res, SqlTemplateResultToJson(r.value()));
  } else if (op == "count") {
    auto r = scenario.CountForList(body);
    if (!SendError(res, r)) SendData(res, std::to_string(r.value()));
  } else if (op == "version") {
    auto r = scenario.GetVersion(body);
    if (!SendError(res, r)) SendData(res, r.value());
  } else {
    auto request = ParseEnrichBody(body);
    if (SendError(res, request)) return;
    auto r = scenario.Enrich(request.value());
    if (!SendError(res, r)) SendData(res, json(r.value()));
  }
}

}  // namespace

json SqlTemplateResultToJson(const SqlTemplateResult& r) {
  json columns = json::array();
  for (const auto& c : r.columns) columns.push_back(ColumnToJson(c));
  json enrich = json::array();
  for (const auto& e : r.enrich_sqls) {
    enrich.push_back(
        {{"group", e.group}, {"keyColumn", e.key_column}, {"sql", e.sql}, {"columns", e.columns}});
  }
  return json{
      {"sqlTemplate", r.sql_template},
      {"columns", std::move(columns)},
      {"orderBy", r.order_by},
      {"uniqueKey", r.unique_key},
      {"tenant", r.tenant},
      {"schema", r.schema},
      {"version", r.version},
      {"templateType", r.template_type},
      {"excelTemplate", r.excel_template.empty() ? json(nullptr) : json(Base64(r.excel_template))},
      {"paramSchema", r.param_schema},
      {"supportCountForList", r.support_count_for_list},
      {"supportVersion", r.support_version},
      {"needEnrich", r.need_enrich},
      {"enrichSqls", std::move(enrich)}};
}

void RegisterSqlScenarios(httplib::Server& server, std::string token,
                          std::vector<std::shared_ptr<SqlScenario>> scenarios,
                          SqlScenarioServerOptions options) {
  RequireSecret("the internal token", token, kMinInternalTokenBytes);
  auto refusals = std::make_shared<RefusalLog>(options.refusal_log);
  auto by_id = std::make_shared<std::map<std::string, std::shared_ptr<SqlScenario>>>();
  for (auto& s : scenarios) (*by_id)[s->QueryId()] = std::move(s);
  server.set_tcp_nodelay(true);
  KeepConnections(server);
  server.Post(R"(/dispatch/(sql|count|version|enrich))",
              [token = std::move(token), refusals, by_id, options](const httplib::Request& req,
                                                                   httplib::Response& res) {
                if (!AdmitCaller(token, req, res, *refusals)) return;
                auto it = by_id->find(req.get_param_value("queryId"));
                if (it == by_id->end()) {
                  return Send(res, 404, ErrorEnvelope(404, "unknown export scenario"));
                }
                if (req.body.size() > options.max_request_bytes) {
                  return Send(res, 413, ErrorEnvelope(400, "request body too large"));
                }
                json body = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
                if (body.is_discarded() || !body.is_object()) {
                  return Send(res, 400, ErrorEnvelope(400, "body must be a JSON object"));
                }
                try {
                  Dispatch(*it->second, req.matches[1], body, res);
                } catch (const std::exception&) {
                  // The implementation threw → 500, retryable at the center.
                  Send(res, 500, ErrorEnvelope(500, "scenario failed"));
                }
              });
}

}  // namespace export_center::sdk
