#include "source/sql/sql_contract_client.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <chrono>

#include "common/encoding.h"
#include "common/json_dump.h"
#include "common/nesting.h"
#include "source/common/business_reply.h"
#include "source/common/service_client.h"

namespace export_center::source {
namespace {

using nlohmann::json;

StatusOr<std::string> DecodeBase64(const std::string& text) {
  std::string clean;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) clean += c;
  }
  auto bytes = Base64Decode(clean);
  if (!bytes) return InvalidArgument("excelTemplate is not base64");
  return std::move(*bytes);
}

bool Flag(const json& j, const char* name) {
  auto it = j.find(name);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::string Text(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return it->dump();
  return "";
}

StatusOr<std::vector<EnrichSqlDef>> ParseEnrichSqls(const json& data) {
  std::vector<EnrichSqlDef> out;
  auto it = data.find("enrichSqls");
  if (it == data.end() || it->is_null()) return out;
  if (!it->is_array()) return InvalidArgument("enrichSqls is not an array");
  for (const auto& e : *it) {
    if (!e.is_object()) return InvalidArgument("enrichSqls entry is not an object");
    EnrichSqlDef def{Text(e, "group"), Text(e, "keyColumn"), Text(e, "sql"), {}};
    if (def.key_column.empty() || def.sql.empty()) {
      return InvalidArgument("enrichSqls entry " + def.group + " lacks keyColumn or sql");
    }
    auto cols = e.find("columns");
    if (cols == e.end() || !cols->is_array() || cols->empty()) {
      return InvalidArgument("enrichSqls entry " + def.group + " lacks columns");
    }
    for (const auto& c : *cols) {
      if (!c.is_string()) return InvalidArgument("enrichSqls columns must be strings");
      def.columns.push_back(c.get<std::string>());
    }
    out.push_back(std::move(def));
  }
  return out;
}

StatusOr<std::vector<std::string>> ParseUniqueKey(const json& data) {
  std::vector<std::string> out;
  auto it = data.find("uniqueKey");
  if (it == data.end() || it->is_null()) return out;
  if (!it->is_array()) return InvalidArgument("uniqueKey is not an array of column names");
  for (const auto& c : *it) {
    if (!c.is_string() || c.get_ref<const std::string&>().empty()) {
      return InvalidArgument("uniqueKey holds a value that is not a column name");
    }
    out.push_back(c.get<std::string>());
  }
  return out;
}

StatusOr<std::vector<ContractColumn>> ParseContractColumns(const json& data,
                                                           const task::Languages& languages) {
  auto it = data.find("columns");
  if (it == data.end() || !it->is_array()) return InvalidArgument("contract lacks columns");
  // The flags are ours; ParseWireColumns sees the plain column objects.
  json plain = json::array();
  for (const auto& c : *it) {
    if (!c.is_object()) return InvalidArgument("contract column is not an object");
    json p = c;
    for (const char* flag : {"enrich", "keyColumn", "critical"}) p.erase(flag);
    plain.push_back(std::move(p));
  }
  auto parsed = task::ParseWireColumns(plain, languages.locale, languages.default_language);
  if (!parsed.ok()) return parsed.status().WithContext("contract columns");
  std::vector<ContractColumn> out;
  for (size_t i = 0; i < parsed->size(); ++i) {
    const json& c = (*it)[i];
    out.push_back({(*parsed)[i], Flag(c, "enrich"), Flag(c, "keyColumn"), Flag(c, "critical")});
  }
  return out;
}

class HttpSqlContractClient : public SqlContractClient {
 public:
  HttpSqlContractClient(SqlContractClientOptions options, http::HttpClientFactory* http)
      : options_(std::move(options)), http_(http) {}

  StatusOr<SqlContract> GetSqlTemplate(const json& params) override {
    EC_ASSIGN_OR_RETURN(json data, Call("sql", params));
    if (!data.is_object()) return InvalidArgument("/dispatch/sql data is not an object");
    return ParseSqlContract(data, options_.languages);
  }

  StatusOr<int64_t> CountForList(const json& params) override {
    EC_ASSIGN_OR_RETURN(json data, Call("count", params));
    if (data.is_number_integer() && data.get<int64_t>() >= 0) return data.get<int64_t>();
    if (data.is_string()) {
      try {
        size_t used = 0;
        long long v = std::stoll(data.get<std::string>(), &used);
        if (used == data.get_ref<const std::string&>().size() && v >= 0) return int64_t{v};
      } catch (...) {
      }
    }
    return InvalidArgument("/dispatch/count data is not a non-negative integer");
  }

  StatusOr<std::string> GetVersion(const json& params) override {
    EC_ASSIGN_OR_RETURN(json data, Call("version", params));
    if (data.is_number_integer()) return data.dump();
    if (data.is_string() && !data.get_ref<const std::string&>().empty() &&
        data.get_ref<const std::string&>().size() <= 128) {
      return data.get<std::string>();
    }
    return InvalidArgument("/dispatch/version data is not an integer or short string");
  }

  StatusOr<std::vector<json>> Enrich(const EnrichRequest& request) override {
    json body = {{"keyColumn", request.key_column},
                 {"keys", request.keys},
                 {"columns", request.columns},
                 {"parameters", request.parameters}};
    EC_ASSIGN_OR_RETURN(json data, Call("enrich", body));
    if (!data.is_array()) return InvalidArgument("/dispatch/enrich data is not an array");
    // Results are written back by index (docs/sql-template-route.md#enrichment):
    // a short or long answer would shift every later row's values onto the wrong row.
    if (data.size() != request.keys.size()) {
      return InvalidArgument("/dispatch/enrich returned " + std::to_string(data.size()) +
                             " results for " + std::to_string(request.keys.size()) + " keys");
    }
    std::vector<json> out;
    for (auto& item : data) {
      if (!item.is_object() && !item.is_null()) {
        return InvalidArgument("/dispatch/enrich result is not an object");
      }
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  StatusOr<json> Call(const std::string& op, const json& body) {
    const auto started = std::chrono::steady_clock::now();
    StatusOr<json> result = CallOnce(op, body);
    if (options_.on_call) {
      const auto elapsed = std::chrono::steady_clock::now() - started;
      options_.on_call(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(),
                       result.status().code());
    }
    return result;
  }

  StatusOr<json> CallOnce(const std::string& op, const json& body) {
    EC_RETURN_IF_ERROR(EnsureClient());
    http::ClientRequest request;
    request.method = "POST";
    request.path = options_.service.base_path + "/dispatch/" + op +
                   "?queryId=" + http::EncodeQueryParam(options_.query_id);
    request.headers.Add("X-Internal-Service-Token", options_.service.internal_token);
    request.headers.Add("Accept", "application/json");
    request.content_type = "application/json";
    request.body = DumpTolerant(body);
    // Capped while reading, like provider batches: a service that streams
    // without end costs max_response_bytes and a bounded time, not the host.
    request.deadline = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(options_.client.connect_timeout_ms +
                                                 2LL * options_.client.read_timeout_ms);
    request.max_body_bytes = options_.client.max_response_bytes;
    http::ClientAnswer res = client_->Send(request);
    switch (res.outcome) {
      case http::ClientAnswer::Outcome::kTooLarge:
        return InvalidArgument("contract answer exceeds " +
                               std::to_string(options_.client.max_response_bytes) + " bytes");
      case http::ClientAnswer::Outcome::kTooSlow:
        return Unavailable("contract answer to /dispatch/" + op + " took too long to arrive");
      case http::ClientAnswer::Outcome::kNotSent:
        return Unavailable("contract call /dispatch/" + op + " failed: " + res.error_text);
      case http::ClientAnswer::Outcome::kRead:
        break;
    }
    // Nested past kMaxNesting: refused before a tree exists (common/nesting.h).
    StatusOr<json> read = ParseJsonWithin<json>(res.body);
    json env = read.ok() ? std::move(read).value() : json(json::value_t::discarded);
    bool is_env = !env.is_discarded() && env.is_object();
    std::string message = is_env && env.contains("message") && env["message"].is_string()
                              ? env["message"].get<std::string>()
                              : "";
    int code = res.status;
    if (code == 200) {
      if (!read.ok()) return read.status().WithContext("contract answer to /dispatch/" + op);
      if (!is_env) return InvalidArgument("contract answer is not a JSON envelope");
      auto env_code = EnvelopeCode(env);
      if (!env_code) return InvalidArgument("contract envelope lacks a code");
      code = *env_code;
    }
    if (code != 200) {
      Status s = BusinessError(code, "contract /dispatch/" + op + " answered", message);
      if (code == 401 || code == 403) {
        // A rejected token is a security event, not just a failure.
        spdlog::error(
            "SECURITY: business service {} rejected the internal token on /dispatch/{} "
            "queryId={} {}",
            options_.service.name, op, options_.query_id, options_.log_context);
      }
      return s;
    }
    auto data = env.find("data");
    if (data == env.end()) return InvalidArgument("contract envelope lacks data");
    return std::move(*data);
  }

  Status EnsureClient() {
    if (client_) return Status::Ok();
    const std::string& base = options_.service.base_url;
    if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0) {
      return InvalidArgument("service '" + options_.service.name + "' has no http(s) base URL");
    }
    EC_ASSIGN_OR_RETURN(
        client_, http_->NewClient(ServiceClientOptions(base, options_.client.connect_timeout_ms,
                                                       options_.client.read_timeout_ms)));
    return Status::Ok();
  }

  SqlContractClientOptions options_;
  http::HttpClientFactory* http_;  // not owned
  std::unique_ptr<http::HttpClient> client_;
};

}  // namespace

std::vector<task::Column> SqlContract::TaskColumns() const {
  std::vector<task::Column> out;
  for (const auto& c : columns) out.push_back(c.column);
  return out;
}

StatusOr<SqlContract> ParseSqlContract(const json& data, const task::Languages& languages) {
  SqlContract c;
  c.sql_template = Text(data, "sqlTemplate");
  if (c.sql_template.empty()) return InvalidArgument("contract lacks sqlTemplate");
  EC_ASSIGN_OR_RETURN(c.columns, ParseContractColumns(data, languages));
  c.order_by = Text(data, "orderBy");
  EC_ASSIGN_OR_RETURN(c.unique_key, ParseUniqueKey(data));
  c.tenant = Text(data, "tenant");
  c.schema = Text(data, "schema");
  c.version = Text(data, "version");
  c.template_type = Text(data, "templateType");
  if (c.template_type.empty()) c.template_type = "METADATA";
  if (c.template_type != "METADATA" && c.template_type != "EXCEL_TEMPLATE") {
    return InvalidArgument("templateType " + c.template_type +
                           " is not METADATA or EXCEL_TEMPLATE");
  }
  std::string excel = Text(data, "excelTemplate");
  if (!excel.empty()) {
    EC_ASSIGN_OR_RETURN(c.excel_template, DecodeBase64(excel));
  }
  if (auto it = data.find("paramSchema"); it != data.end()) c.param_schema = *it;
  c.support_count_for_list = Flag(data, "supportCountForList");
  c.support_version = Flag(data, "supportVersion");
  c.need_enrich = Flag(data, "needEnrich");
  EC_ASSIGN_OR_RETURN(c.enrich_sqls, ParseEnrichSqls(data));
  return c;
}

std::unique_ptr<SqlContractClient> NewHttpSqlContractClient(const SqlContractClientOptions& options,
                                                            http::HttpClientFactory* http) {
  return std::make_unique<HttpSqlContractClient>(options, http);
}

}  // namespace export_center::source
