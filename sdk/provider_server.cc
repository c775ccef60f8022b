#include "sdk/provider_server.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <exception>
#include <map>

namespace export_center::sdk {
namespace {

using nlohmann::json;

constexpr size_t kMaxIdentityChars = 64;
constexpr size_t kMaxCursorChars = 1024;
constexpr size_t kMaxSnapshotTokenChars = 512;

std::string Dump(const json& j) {
  // Business data may hold invalid UTF-8; replace it rather than throw.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool HasControlChars(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// A required identity string: 1..64 characters, no control characters (the
// snapshot MAC joins fields with '\n').
std::optional<std::string> Identity(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || !it->is_string()) return std::nullopt;
  const auto& s = it->get_ref<const std::string&>();
  if (s.empty() || s.size() > kMaxIdentityChars || HasControlChars(s)) return std::nullopt;
  return s;
}

ProviderError Bad(std::string message) { return ProviderError{400, std::move(message)}; }

// Optional string field: absent or null -> nullopt; *ok=false on a bad type.
bool OptionalString(const json& body, const char* name, size_t max_chars,
                    std::optional<std::string>* out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return true;
  if (!it->is_string() || it->get_ref<const std::string&>().size() > max_chars) return false;
  *out = it->get<std::string>();
  return true;
}

bool ValidTaskId(const std::string& s) {
  if (s.empty() || s.size() > 19 || s[0] == '0') return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return s.size() < 19 || s <= "9223372036854775807";
}

void Send(httplib::Response& res, int code, std::string body) {
  res.status = code;
  res.set_content(std::move(body), "application/json; charset=utf-8");
}

}  // namespace

void KeepConnections(httplib::Server& server) {
  // cpp-httplib closes a kept-alive connection after 5 requests by default:
  // an export of 400 batches would reconnect 80 times.
  server.set_keep_alive_max_count(kKeepAliveRequests);
  server.set_keep_alive_timeout(kKeepAliveSeconds);
}

bool TokenMatches(std::string_view expected, std::string_view given) {
  if (expected.empty()) return false;
  // Hash both sides so the comparison is constant-time regardless of length.
  unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(expected.data()), expected.size(), a);
  SHA256(reinterpret_cast<const unsigned char*>(given.data()), given.size(), b);
  return CRYPTO_memcmp(a, b, sizeof a) == 0;
}

Result<BatchRequest> ParseBatchRequest(std::string_view export_type, std::string_view body_text,
                                       int max_limit) {
  json body = json::parse(body_text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) return Bad("request body is not a JSON object");
  BatchRequest r;
  r.export_type = std::string(export_type);
  auto task_id = body.find("taskId");
  if (task_id == body.end() || !task_id->is_string() || !ValidTaskId(task_id->get<std::string>())) {
    return Bad("taskId must be a decimal id string");
  }
  r.task_id = std::stoll(task_id->get<std::string>());
  auto tenant = Identity(body, "tenantId");
  if (!tenant) return Bad("tenantId is required");
  r.tenant_id = *tenant;
  auto app = Identity(body, "appCode");
  if (!app || (*app != "PLATFORM" && *app != "MERCHANT")) {
    return Bad("appCode must be PLATFORM or MERCHANT");
  }
  r.app_code = *app;
  auto by = Identity(body, "requestedBy");
  if (!by) return Bad("requestedBy is required");
  r.requested_by = *by;
  auto version = body.find("dispatchVersion");
  if (version == body.end() || !version->is_number_integer() || version->get<int64_t>() < 1) {
    return Bad("dispatchVersion must be a positive integer");
  }
  r.dispatch_version = version->get<int64_t>();
  auto params = body.find("parameters");
  if (params != body.end() && !params->is_null()) {
    if (!params->is_object()) return Bad("parameters must be an object");
    r.parameters = *params;
  }
  if (!OptionalString(body, "cursor", kMaxCursorChars, &r.cursor)) {
    return Bad("cursor must be a string or null");
  }
  if (!OptionalString(body, "snapshotToken", kMaxSnapshotTokenChars, &r.snapshot_token)) {
    return Bad("snapshotToken must be a string or null");
  }
  if (r.cursor.has_value() != r.snapshot_token.has_value()) {
    return Bad("cursor and snapshotToken must be both null or both set");
  }
  auto limit = body.find("limit");
  if (limit == body.end() || !limit->is_number_integer() || limit->get<int64_t>() < 1 ||
      limit->get<int64_t>() > max_limit) {
    return Bad("limit must be an integer 1.." + std::to_string(max_limit));
  }
  r.limit = limit->get<int>();
  return r;
}

std::string SuccessEnvelope(const std::vector<Column>& columns, const BatchRequest& request,
                            const BatchResponse& response) {
  auto text_or_null = [](const std::optional<std::string>& v) { return v ? json(*v) : json(); };
  json data = {
      {"schemaVersion", 1},
      {"schemaHash", SchemaHash(columns)},
      {"snapshotToken",
       text_or_null(response.snapshot_token ? response.snapshot_token : request.snapshot_token)},
      {"nextCursor", text_or_null(response.next_cursor)},
      {"hasMore", response.has_more},
      {"totalRows", response.total_rows ? json(*response.total_rows) : json()},
  };
  // Later batches may omit the columns; the hash still guards them.
  if (!request.cursor) data["columns"] = ColumnsToJson(columns);
  if (!response.written) {
    data["rows"] = response.rows;
    return Dump(json{{"code", "200"}, {"message", "success"}, {"data", std::move(data)}});
  }
  // Written rows are JSON text already: the rest goes around them.
  std::string rest = Dump(data);
  std::string body = R"({"code":"200","message":"success","data":{"rows":)";
  response.written->AppendJson(&body);
  body += ',';
  body.append(rest, 1, std::string::npos);  // the other fields and the closing brace
  body += '}';
  return body;
}

std::string ErrorEnvelope(int code, std::string_view message) {
  return Dump(json{{"code", std::to_string(code)}, {"message", message}, {"data", nullptr}});
}

bool AdmitCaller(std::string_view token, const httplib::Request& req, httplib::Response& res,
                 RefusalLog& log) {
  if (TokenMatches(token, req.get_header_value(kTokenHeader))) return true;
  log.Refused(req.method + " " + req.path + " from " + req.remote_addr + ": " +
              (req.has_header(kTokenHeader) ? "wrong " : "no ") + kTokenHeader);
  Send(res, 401, ErrorEnvelope(401, "invalid internal service token"));
  return false;
}

void RegisterBatchProviders(httplib::Server& server, std::string token,
                            std::vector<std::shared_ptr<BatchProvider>> providers,
                            ProviderServerOptions options) {
  RequireSecret("the internal token", token, kMinInternalTokenBytes);
  auto refusals = std::make_shared<RefusalLog>(options.refusal_log);
  auto by_type = std::make_shared<std::map<std::string, std::shared_ptr<BatchProvider>>>();
  for (auto& p : providers) (*by_type)[p->ExportType()] = std::move(p);
  server.set_tcp_nodelay(true);
  KeepConnections(server);
  server.Post(
      R"(/internal/exports/v1/([^/]+)/batches)",
      [by_type, token = std::move(token), refusals, options](const httplib::Request& req,
                                                             httplib::Response& res) {
        // The token comes first: an unauthenticated caller learns nothing, not
        // even which export types exist.
        if (!AdmitCaller(token, req, res, *refusals)) return;
        auto it = by_type->find(req.matches[1].str());
        if (it == by_type->end()) return Send(res, 404, ErrorEnvelope(404, "unknown export type"));
        if (req.body.size() > options.max_request_bytes) {
          return Send(res, 413, ErrorEnvelope(400, "request body too large"));
        }
        auto request = ParseBatchRequest(it->first, req.body, options.max_limit);
        if (!request.ok()) {
          return Send(res, request.error().code,
                      ErrorEnvelope(request.error().code, request.error().message));
        }
        try {
          auto result = it->second->Fetch(request.value());
          if (!result.ok()) {
            return Send(res, result.error().code,
                        ErrorEnvelope(result.error().code, result.error().message));
          }
          if (result.value().has_more && !result.value().next_cursor) {
            return Send(res, 500, ErrorEnvelope(500, "provider bug: hasMore without nextCursor"));
          }
          if (const auto& written = result.value().written) {
            std::optional<std::string> misuse = written->error();
            if (!misuse && !result.value().rows.empty()) misuse = "both rows and written rows set";
            if (misuse) return Send(res, 500, ErrorEnvelope(500, "provider bug: " + *misuse));
          }
          Send(res, 200, SuccessEnvelope(it->second->Columns(), request.value(), result.value()));
        } catch (const std::exception&) {
          // Business code may throw; the contract speaks envelopes. 500 lets the
          // center retry later.
          Send(res, 500, ErrorEnvelope(500, "internal error"));
        }
      });
}

}  // namespace export_center::sdk
