#include "api/export_api.h"

#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "api/auth.h"
#include "api/download_center_page.h"
#include "api/download_token.h"
#include "api/download_util.h"
#include "api/envelope.h"
#include "api/parameters.h"
#include "api/strict_json.h"
#include "api/task_json.h"
#include "common/ids.h"
#include "common/utf8.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using httplib::Request;
using httplib::Response;
using HandlerResponse = httplib::Server::HandlerResponse;

constexpr size_t kStreamChunkBytes = 64 * 1024;
constexpr char kRequestIdHeader[] = "X-Request-Id";
constexpr char kDownloadsPrefix[] = "/api/platform/v1/files/downloads/";

// httplib runs a request start to finish on one worker thread, so the start
// time can live in a thread_local between the pre-routing hook and the logger.
thread_local std::chrono::steady_clock::time_point t_request_start;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Base(const char* suffix) { return std::string(kApiBase) + suffix; }

// A caller-supplied request id is kept only if it is short and harmless in logs.
std::string AcceptRequestId(const std::string& given) {
  static const std::regex kSafe("[A-Za-z0-9._-]{1,64}");
  return std::regex_match(given, kSafe) ? given : NewUuid();
}

// Signed-URL tokens are credentials: they never reach the log.
std::string LoggablePath(const std::string& path) {
  if (path.rfind(kDownloadsPrefix, 0) == 0) return std::string(kDownloadsPrefix) + "<redacted>";
  return path;
}

// The envelope code, read back from the body for the access log.
std::string EnvelopeCodeOf(const Response& res) {
  constexpr std::string_view kPrefix = "{\"code\":\"";
  if (res.body.rfind(kPrefix, 0) != 0) return "-";
  size_t end = res.body.find('"', kPrefix.size());
  return end == std::string::npos ? "-" : res.body.substr(kPrefix.size(), end - kPrefix.size());
}

// Strict positive integer for query parameters; nullopt if malformed or out of [lo, hi].
std::optional<int> ParseIntParam(const std::string& text, int lo, int hi) {
  if (text.empty() || text.size() > 9 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int v = std::stoi(text);
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

// taskName: 1-100 characters, not blank, no control characters.
Status CheckTaskName(const std::string& name) {
  size_t chars = utf8::CountCodePoints(name);
  if (chars < 1 || chars > 100) return InvalidArgument("taskName must be 1-100 characters");
  bool blank = true;
  std::string_view rest = name;
  while (!rest.empty()) {
    char32_t cp = 0;
    size_t n = utf8::Decode(rest, &cp);
    if (n == 0) return InvalidArgument("taskName is not valid UTF-8");
    if (utf8::IsControlOrBidi(cp)) {
      return InvalidArgument("taskName must not contain control characters");
    }
    if (cp != ' ' && cp != 0x3000) blank = false;
    rest.remove_prefix(n);
  }
  if (blank) return InvalidArgument("taskName must not be blank");
  return Status::Ok();
}

json DefinitionToJson(const registry::ExportDefinition& def) {
  json params = json::array();
  for (const auto& p : def.parameters) {
    params.push_back({{"name", p.name},
                      {"type", p.type},
                      {"title", p.title},
                      {"required", p.required},
                      {"allowed", p.allowed}});
  }
  return {{"exportType", def.name},
          {"title", def.title},
          {"formats", {"XLSX", "CSV"}},
          {"parameters", std::move(params)}};
}

struct Route {
  std::string method;
  std::regex pattern;
};

// Streams [offset, offset+length) of the object in chunks so a 50 MB file
// never sits in memory.
httplib::ContentProvider ChunkedReader(std::shared_ptr<storage::ObjectReader> reader,
                                       uint64_t base, int64_t task_id) {
  return [reader = std::move(reader), base, task_id](size_t offset, size_t length,
                                                     httplib::DataSink& sink) {
    std::string chunk;
    Status s = reader->ReadAt(base + offset, std::min<uint64_t>(length, kStreamChunkBytes), &chunk);
    if (!s.ok() || chunk.empty()) {
      spdlog::error("download of task {} stopped: {}", task_id,
                    s.ok() ? "short read" : s.ToString());
      return false;
    }
    return sink.write(chunk.data(), chunk.size());
  };
}

}  // namespace

// The route handlers; one per endpoint, each short, all answering through
// the envelope helpers.
class ExportApi::Handlers {
 public:
  explicit Handlers(ExportApi& api) : api_(api), deps_(api.deps_) {}

  void Register(httplib::Server& s);

 private:
  // ---- plumbing ----
  void Add(httplib::Server& s, const std::string& method, const std::string& pattern,
           httplib::Server::Handler h);
  HandlerResponse OnError(const Request& req, Response& res);
  void Log(const Request& req, const Response& res) const;
  StatusOr<Principal> Authenticate(const Request& req) const;
  // NotFound unless the task exists and the caller may see it (docs/http-api.md#access-rules).
  StatusOr<task::Task> LoadVisibleTask(const Principal& p, const std::string& id_text) const;
  std::shared_ptr<const registry::RegistrySnapshot> Snapshot() const;
  void NotifyCreated(const std::string& type) const;

  // ---- endpoints ----
  void CreateTask(const Request& req, Response& res);
  StatusOr<json> DoCreate(const Request& req, const Principal& p, const std::string& request_id);
  void ListTasks(const Request& req, Response& res);
  StatusOr<json> DoList(const Request& req, const Principal& p);
  void GetTask(const Request& req, Response& res);
  void Download(const Request& req, Response& res);
  void CreateDownloadUrl(const Request& req, Response& res);
  void SignedDownload(const Request& req, Response& res);
  void StreamTask(const Request& req, Response& res, const task::Task& t);
  void Retry(const Request& req, Response& res);
  StatusOr<task::Task> DoRetry(const Request& req, const Principal& p,
                               const std::string& request_id);
  void Cancel(const Request& req, Response& res);
  void ExportTypes(const Request& req, Response& res);
  void Readyz(Response& res);

  ExportApi& api_;
  const Deps& deps_;
  std::vector<Route> routes_;
};

void ExportApi::Handlers::Add(httplib::Server& s, const std::string& method,
                              const std::string& pattern, httplib::Server::Handler h) {
  routes_.push_back({method, std::regex(pattern)});
  auto guarded = [h = std::move(h)](const Request& req, Response& res) {
    try {
      h(req, res);
    } catch (const std::exception& e) {
      // Library exceptions stop here; the client sees the envelope, the log the cause.
      spdlog::error("request {} failed: {}", res.get_header_value(kRequestIdHeader), e.what());
      std::string request_id = res.get_header_value(kRequestIdHeader);
      res = Response();
      res.set_header(kRequestIdHeader, request_id);
      WriteHttpError(res, 500, "internal error; please contact support");
    }
  };
  if (method == "GET") s.Get(pattern, guarded);
  if (method == "POST") s.Post(pattern, guarded);
  if (method == "POST_NO_BODY") {
    routes_.back().method = "POST";
    // These actions take no body. A plain handler makes httplib wait for a
    // body until its read timeout when a client (curl -X POST) sends neither
    // Content-Length nor chunked encoding; a content-reader handler lets us
    // skip that and only drain a body that was announced.
    s.Post(pattern, [guarded](const Request& req, Response& res,
                              const httplib::ContentReader& reader) {
      if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
        if (!reader([](const char*, size_t) { return true; })) {
          if (res.status == 413) return WriteHttpError(res, 413, "request body too large");
          return WriteHttpError(res, 400, "could not read the request body");
        }
      }
      guarded(req, res);
    });
  }
}

void ExportApi::Handlers::Register(httplib::Server& s) {
  using namespace std::placeholders;
  s.set_payload_max_length(static_cast<size_t>(deps_.limits.max_body_bytes));
  if (deps_.server.threads > 0) {
    int n = deps_.server.threads;
    s.new_task_queue = [n] { return new httplib::ThreadPool(static_cast<size_t>(n)); };
  }
  s.set_pre_routing_handler([](const Request& req, Response& res) {
    t_request_start = std::chrono::steady_clock::now();
    res.set_header(kRequestIdHeader, AcceptRequestId(req.get_header_value(kRequestIdHeader)));
    // httplib would apply Range to every response body; only the download
    // endpoints honour Range, and they read the header themselves.
    const_cast<Request&>(req).ranges.clear();
    return HandlerResponse::Unhandled;
  });
  s.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const Request& req, Response& res) { return OnError(req, res); }));
  s.set_logger([this](const Request& req, const Response& res) { Log(req, res); });

  const std::string id = "/([^/]+)";
  Add(s, "POST", Base("/export-tasks"), std::bind(&Handlers::CreateTask, this, _1, _2));
  Add(s, "GET", Base("/export-tasks"), std::bind(&Handlers::ListTasks, this, _1, _2));
  Add(s, "GET", Base("/export-tasks") + id, std::bind(&Handlers::GetTask, this, _1, _2));
  Add(s, "GET", Base("/export-tasks") + id + "/download",
      std::bind(&Handlers::Download, this, _1, _2));
  Add(s, "POST_NO_BODY", Base("/export-tasks") + id + "/download-url",
      std::bind(&Handlers::CreateDownloadUrl, this, _1, _2));
  Add(s, "POST_NO_BODY", Base("/export-tasks") + id + "/retry",
      std::bind(&Handlers::Retry, this, _1, _2));
  Add(s, "POST_NO_BODY", Base("/export-tasks") + id + "/cancel",
      std::bind(&Handlers::Cancel, this, _1, _2));
  Add(s, "GET", Base("/export-types"), std::bind(&Handlers::ExportTypes, this, _1, _2));
  Add(s, "GET", Base("/downloads") + id, std::bind(&Handlers::SignedDownload, this, _1, _2));
  Add(s, "GET", "/healthz", [](const Request&, Response& res) {
    WriteSuccess(res, {{"status", "UP"}});
  });
  Add(s, "GET", "/readyz", [this](const Request&, Response& res) { Readyz(res); });
  Add(s, "GET", "/metrics", [this](const Request&, Response& res) {
    res.set_content(deps_.metrics_text ? deps_.metrics_text() : std::string(),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  Add(s, "GET", "/", [](const Request&, Response& res) {
    res.set_header("Cache-Control", "no-cache");
    res.set_content(std::string(DownloadCenterHtml()), "text/html; charset=utf-8");
  });
}

HandlerResponse ExportApi::Handlers::OnError(const Request& req, Response& res) {
  if (!res.body.empty()) return HandlerResponse::Unhandled;  // a handler already answered
  switch (res.status) {
    case 404: {
      std::vector<std::string> allowed;
      for (const auto& r : routes_) {
        if (std::regex_match(req.path, r.pattern)) allowed.push_back(r.method);
      }
      if (allowed.empty()) {
        WriteHttpError(res, 404, "no such endpoint: " + LoggablePath(req.path));
        break;
      }
      if (std::find(allowed.begin(), allowed.end(), "GET") != allowed.end()) {
        allowed.push_back("HEAD");
      }
      std::string allow;
      for (const auto& m : allowed) allow += (allow.empty() ? "" : ", ") + m;
      res.set_header("Allow", allow);
      WriteHttpError(res, 405, "method " + req.method + " is not allowed here; use " + allow);
      break;
    }
    case 413:
      WriteHttpError(res, 413, "request body exceeds " +
                                   std::to_string(deps_.limits.max_body_bytes) + " bytes");
      break;
    case 416:
      WriteHttpError(res, 416, "invalid Range header");
      break;
    default:
      WriteHttpError(res, res.status, res.status < 500 ? "bad request" : "internal error");
  }
  return HandlerResponse::Handled;
}

void ExportApi::Handlers::Log(const Request& req, const Response& res) const {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - t_request_start)
                .count();
  std::string request_id = res.get_header_value(kRequestIdHeader);
  spdlog::info("http request_id={} method={} path={} status={} code={} ms={}",
               request_id.empty() ? "-" : request_id, req.method, LoggablePath(req.path),
               res.status, EnvelopeCodeOf(res), ms);
}

StatusOr<Principal> ExportApi::Handlers::Authenticate(const Request& req) const {
  if (!api_.verifier_) {
    spdlog::error("authentication is not configured: {}", api_.init_status_.ToString());
    return Internal("authentication is not configured");
  }
  return api_.verifier_->Authenticate(req.get_header_value("Authorization"));
}

StatusOr<task::Task> ExportApi::Handlers::LoadVisibleTask(const Principal& p,
                                                          const std::string& id_text) const {
  auto id = ParseId(id_text);
  if (!id) return InvalidArgument("task id must be 1-19 digits without leading zeros");
  auto task = deps_.store->GetTask(*id);
  // Someone else's task looks exactly like a missing one.
  if ((!task.ok() && task.status().code() == StatusCode::kNotFound) ||
      (task.ok() && !CanAccessTask(p, *task))) {
    return NotFound("export task " + id_text + " not found");
  }
  return task;
}

std::shared_ptr<const registry::RegistrySnapshot> ExportApi::Handlers::Snapshot() const {
  return deps_.registry->Current();
}

void ExportApi::Handlers::NotifyCreated(const std::string& type) const {
  if (deps_.on_task_created) deps_.on_task_created();
  if (deps_.on_created && !type.empty()) deps_.on_created(type);
}

// ---- POST /export-tasks ------------------------------------------------------

void ExportApi::Handlers::CreateTask(const Request& req, Response& res) {
  auto p = Authenticate(req);
  if (!p.ok()) return WriteStatus(res, p.status());
  auto data = DoCreate(req, *p, res.get_header_value(kRequestIdHeader));
  if (!data.ok()) return WriteStatus(res, data.status());
  WriteSuccess(res, std::move(data).value());
}

StatusOr<json> ExportApi::Handlers::DoCreate(const Request& req, const Principal& p,
                                             const std::string& request_id) {
  EC_RETURN_IF_ERROR(CheckJsonContentType(req.get_header_value("Content-Type")));
  EC_ASSIGN_OR_RETURN(json body, ParseStrictJson(req.body));
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key != "exportType" && key != "format" && key != "taskName" && key != "parameters") {
      return InvalidArgument("unknown field " + key);
    }
  }
  auto type = body.find("exportType");
  if (type == body.end() || !type->is_string() || type->get_ref<const std::string&>().empty()) {
    return InvalidArgument("exportType is required");
  }
  auto snapshot = Snapshot();
  const registry::ExportDefinition* def = snapshot->Find(type->get<std::string>());
  if (def == nullptr) return InvalidArgument("unknown exportType " + type->get<std::string>());
  EC_RETURN_IF_ERROR(CheckCanRun(p, *def));

  task::FileFormat format = task::FileFormat::kXlsx;
  if (auto f = body.find("format"); f != body.end() && !f->is_null()) {
    auto parsed = f->is_string() ? task::ParseFileFormat(f->get<std::string>()) : std::nullopt;
    if (!parsed) return InvalidArgument("format must be XLSX or CSV");
    format = *parsed;
  }
  std::string task_name = def->title.empty() ? def->name : def->title;
  if (auto n = body.find("taskName"); n != body.end() && !n->is_null()) {
    if (!n->is_string()) return InvalidArgument("taskName must be a string");
    task_name = n->get<std::string>();
    EC_RETURN_IF_ERROR(CheckTaskName(task_name));
  }
  json params = body.contains("parameters") ? body["parameters"] : json();
  EC_ASSIGN_OR_RETURN(std::string canonical, CanonicalParameters(params, *def, deps_.limits));

  store::NewTask nt;
  nt.tenant_id = p.tenant;
  nt.app_code = p.app;
  nt.requested_by = p.user;
  nt.export_type = def->name;
  nt.task_name = task_name;
  nt.format = format;
  nt.parameters_json = canonical;
  nt.params_hash = Sha256Hex(canonical);
  nt.max_attempts = def->max_attempts;
  if (deps_.contract_version) {
    auto version = deps_.contract_version(*def, *snapshot, canonical, p.tenant, p.app, p.user);
    if (version.ok()) {
      nt.contract_version = *version;
    } else {
      // Availability of create beats the version check: without a recorded
      // version the executor skips the comparison (and logs it).
      spdlog::warn("contract version not recorded exportType={} tenantId={}: {}", def->name,
                   p.tenant, version.status().ToString());
    }
  }
  // The request id doubles as the trace id of the task's first command.
  nt.trace_id = request_id;
  store::CreateLimits limits{deps_.limits.dedupe_window_seconds,
                             deps_.limits.max_active_per_user, deps_.limits.max_active_per_type};
  auto created = deps_.store->CreateTask(nt, limits);
  if (!created.ok()) {
    if (created.status().code() == StatusCode::kLimitExceeded) return created.status();
    return created.status().WithContext("creating task");
  }
  spdlog::info("task created task_id={} exportType={} tenantId={} deduplicated={}",
               created->task.id, def->name, p.tenant, created->deduplicated);
  if (!created->deduplicated) NotifyCreated(def->name);
  json data = TaskToJson(created->task);
  data["deduplicated"] = created->deduplicated;
  return data;
}

// ---- GET /export-tasks -------------------------------------------------------

void ExportApi::Handlers::ListTasks(const Request& req, Response& res) {
  auto p = Authenticate(req);
  if (!p.ok()) return WriteStatus(res, p.status());
  auto data = DoList(req, *p);
  if (!data.ok()) return WriteStatus(res, data.status());
  WriteSuccess(res, std::move(data).value());
}

StatusOr<json> ExportApi::Handlers::DoList(const Request& req, const Principal& p) {
  store::TaskStore::ListQuery q;
  q.tenant_id = p.tenant;
  q.app_code = p.app;
  if (!p.HasPerm(kDownloadAllPermission)) q.requested_by = p.user;
  if (req.has_param("status")) {
    q.status = task::ParseTaskState(req.get_param_value("status"));
    if (!q.status) return InvalidArgument("unknown status " + req.get_param_value("status"));
  }
  if (req.has_param("exportType")) {
    std::string type = req.get_param_value("exportType");
    if (type.empty() || type.size() > 128) return InvalidArgument("invalid exportType filter");
    q.export_type = type;
  }
  if (req.has_param("page")) {
    auto page = ParseIntParam(req.get_param_value("page"), 1, 1000000);
    if (!page) return InvalidArgument("page must be a whole number from 1");
    q.page = *page;
  }
  if (req.has_param("size")) {
    auto size = ParseIntParam(req.get_param_value("size"), 1, 100);
    if (!size) return InvalidArgument("size must be a whole number from 1 to 100");
    q.size = *size;
  }
  EC_ASSIGN_OR_RETURN(auto page, deps_.store->ListTasks(q));
  json records = json::array();
  for (const auto& t : page.records) records.push_back(TaskToJson(t));
  return json{{"records", std::move(records)},
              {"total", std::to_string(page.total)},
              {"page", q.page},
              {"size", q.size}};
}

// ---- GET /export-tasks/{id} --------------------------------------------------

void ExportApi::Handlers::GetTask(const Request& req, Response& res) {
  auto p = Authenticate(req);
  if (!p.ok()) return WriteStatus(res, p.status());
  auto t = LoadVisibleTask(*p, req.matches[1]);
  if (!t.ok()) return WriteStatus(res, t.status());
  WriteSuccess(res, TaskToJson(*t));
}

// ---- downloads -----------------------------------------------------------------

void ExportApi::Handlers::Download(const Request& req, Response& res) {
  auto p = Authenticate(req);
  if (!p.ok()) return WriteHttpStatus(res, p.status());
  auto t = LoadVisibleTask(*p, req.matches[1]);
  if (!t.ok()) return WriteHttpStatus(res, t.status());
  StreamTask(req, res, *t);
}

void ExportApi::Handlers::CreateDownloadUrl(const Request& req, Response& res) {
  auto p = Authenticate(req);
  if (!p.ok()) return WriteStatus(res, p.status());
  auto t = LoadVisibleTask(*p, req.matches[1]);
  if (!t.ok()) return WriteStatus(res, t.status());
  if (t->status != task::TaskState::kSucceeded) {
    return WriteStatus(res, Conflict("task " + std::to_string(t->id) + " is " +
                                     std::string(task::ToString(t->status)) +
                                     "; only a SUCCEEDED task has a file to download"));
  }
  DownloadGrant grant{t->id, p->tenant, p->user,
                      NowMs() + int64_t{deps_.auth.download_url_ttl_seconds} * 1000};
  std::string base = deps_.server.public_base_url;
  if (base.empty()) base = "http://" + deps_.server.host + ":" + std::to_string(deps_.server.port);
  while (!base.empty() && base.back() == '/') base.pop_back();
  WriteSuccess(res, {{"url", base + Base("/downloads/") +
                                 SignDownloadGrant(api_.download_secret_, grant)},
                     {"expiresAt", FormatIsoMillis(grant.expires_at_ms)}});
}

void ExportApi::Handlers::SignedDownload(const Request& req, Response& res) {
  auto grant = OpenDownloadGrant(api_.download_secret_, req.matches[1].str());
  if (!grant.ok()) return WriteHttpStatus(res, grant.status());
  if (grant->expires_at_ms <= NowMs()) {
    return WriteHttpError(res, 410, "this download link has expired; request a new one");
  }
  auto t = deps_.store->GetTask(grant->task_id);
  if (!t.ok() && t.status().code() != StatusCode::kNotFound) {
    return WriteHttpStatus(res, t.status());
  }
  if (!t.ok() || t->tenant_id != grant->tenant) {
    return WriteHttpError(res, 404, "export task " + std::to_string(grant->task_id) + " not found");
  }
  StreamTask(req, res, *t);
}

void ExportApi::Handlers::StreamTask(const Request& req, Response& res, const task::Task& t) {
  const std::string id = std::to_string(t.id);
  if (t.status == task::TaskState::kExpired) {
    return WriteHttpError(res, 410, "the file of task " + id + " has expired");
  }
  if (t.status != task::TaskState::kSucceeded || !t.object_key) {
    return WriteHttpError(res, 409, "task " + id + " is " + std::string(task::ToString(t.status)) +
                                        "; its file is not ready");
  }
  auto opened = deps_.storage->Open(*t.object_key);
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kNotFound) {
      return WriteHttpError(res, 410, "the file of task " + id + " is no longer available");
    }
    spdlog::error("opening the file of task {} failed: {}", t.id, opened.status().ToString());
    return WriteHttpStatus(res, opened.status());
  }
  std::shared_ptr<storage::ObjectReader> reader = std::move(opened).value();
  const uint64_t size = reader->size();
  RangeDecision range = DecideRange(req.get_header_value("Range"), size);
  if (range.kind == RangeDecision::kUnsatisfiable) {
    res.set_header("Content-Range", "bytes */" + std::to_string(size));
    return WriteHttpError(res, 416, "requested range not satisfiable; the file has " +
                                        std::to_string(size) + " bytes");
  }
  // A download counts once, not once per resumed chunk.
  if (req.method != "HEAD" && (range.kind == RangeDecision::kWhole || range.offset == 0)) {
    Status s = deps_.store->RecordDownload(t.id);
    if (!s.ok()) spdlog::warn("recording a download of task {} failed: {}", t.id, s.ToString());
  }
  std::string fallback = "export-" + id + "." + std::string(task::FileExtension(t.format));
  std::string name = utf8::SanitizeFileName(
      t.file_name.value_or(t.task_name + "." + std::string(task::FileExtension(t.format))),
      fallback);
  std::string content_type = t.content_type.value_or(std::string(task::ContentType(t.format)));
  res.set_header("Content-Disposition", ContentDisposition(name));
  res.set_header("Accept-Ranges", "bytes");
  res.set_header("Cache-Control", "private, no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
  uint64_t offset = 0, length = size;
  res.status = 200;
  if (range.kind == RangeDecision::kPartial) {
    offset = range.offset, length = range.length;
    res.status = 206;
    res.set_header("Content-Range", "bytes " + std::to_string(offset) + "-" +
                                        std::to_string(offset + length - 1) + "/" +
                                        std::to_string(size));
  }
  if (length == 0) return res.set_content(std::string(), content_type);  // httplib needs length > 0
  res.set_content_provider(static_cast<size_t>(length), content_type,
                           ChunkedReader(std::move(reader), offset, t.id));
}

// ---- retry / cancel ------------------------------------------------------------

void ExportApi::Handlers::Retry(const Request& req, Response& res) {
  auto p = Authenticate(req);
  if (!p.ok()) return WriteStatus(res, p.status());
  auto t = DoRetry(req, *p, res.get_header_value(kRequestIdHeader));
  if (!t.ok()) return WriteStatus(res, t.status());
  spdlog::info("task retried task_id={} exportType={} tenantId={} dispatchVersion={}", t->id,
               t->export_type, t->tenant_id, t->dispatch_version);
  NotifyCreated("");
  WriteSuccess(res, TaskToJson(*t));
}

StatusOr<task::Task> ExportApi::Handlers::DoRetry(const Request& req, const Principal& p,
                                                  const std::string& request_id) {
  EC_ASSIGN_OR_RETURN(task::Task t, LoadVisibleTask(p, req.matches[1]));
  // Permission and `enabled` are checked again at manual retry
  // (docs/task-lifecycle.md#when-definition-values-take-effect).
  auto snapshot = Snapshot();
  const registry::ExportDefinition* def = snapshot->Find(t.export_type);
  if (def == nullptr) {
    return InvalidArgument("export type " + t.export_type + " is no longer registered");
  }
  EC_RETURN_IF_ERROR(CheckCanRun(p, *def));
  if (!task::CanManualRetry(t.status)) {
    return Conflict("task " + std::to_string(t.id) + " is " + std::string(task::ToString(t.status)) +
                    "; only FAILED, CANCELLED, STALE or INCONSISTENT tasks can be retried");
  }
  return deps_.store->ManualRetry(t.id, request_id);
}

void ExportApi::Handlers::Cancel(const Request& req, Response& res) {
  auto p = Authenticate(req);
  if (!p.ok()) return WriteStatus(res, p.status());
  auto t = LoadVisibleTask(*p, req.matches[1]);
  if (!t.ok()) return WriteStatus(res, t.status());
  auto state = deps_.store->RequestCancel(t->id);
  if (!state.ok()) {
    if (state.status().code() != StatusCode::kConflict) return WriteStatus(res, state.status());
    return WriteStatus(res, Conflict("task " + std::to_string(t->id) + " is " +
                                     std::string(task::ToString(t->status)) +
                                     "; only PENDING or RUNNING tasks can be cancelled"));
  }
  spdlog::info("task cancel requested task_id={} state={}", t->id, task::ToString(*state));
  auto after = deps_.store->GetTask(t->id);
  if (!after.ok()) return WriteStatus(res, after.status());
  WriteSuccess(res, TaskToJson(*after));
}

// ---- GET /export-types, /readyz ----------------------------------------------

void ExportApi::Handlers::ExportTypes(const Request& req, Response& res) {
  auto p = Authenticate(req);
  if (!p.ok()) return WriteStatus(res, p.status());
  json types = json::array();
  for (const auto& [name, def] : Snapshot()->definitions) {
    if (CanSeeType(*p, def)) types.push_back(DefinitionToJson(def));
  }
  WriteSuccess(res, std::move(types));
}

void ExportApi::Handlers::Readyz(Response& res) {
  auto now = deps_.store->DatabaseNowMs();
  if (now.ok()) return WriteSuccess(res, {{"status", "READY"}});
  spdlog::warn("readiness check failed: {}", now.status().ToString());
  // Probes read the HTTP status, so "not ready" must not be a 200.
  WriteEnvelope(res, 503, ErrorEnvelope(Unavailable("database unreachable")));
}

// ---- ExportApi -----------------------------------------------------------------

ExportApi::ExportApi(Deps deps) : deps_(std::move(deps)) {
  auto verifier = TokenVerifier::Create(deps_.auth);
  if (verifier.ok()) {
    verifier_ = std::move(verifier).value();
  } else {
    init_status_ = verifier.status();
  }
  download_secret_ = deps_.auth.download_url_secret;
  if (download_secret_.empty()) {
    // Without a shared secret, links only work on the instance that signed them.
    unsigned char random[32];
    RAND_bytes(random, sizeof random);
    download_secret_.assign(reinterpret_cast<char*>(random), sizeof random);
    spdlog::warn("auth.download_url_secret is not set; signed download URLs are valid only on "
                 "this instance until it restarts");
  }
  handlers_ = std::make_unique<Handlers>(*this);
}

StatusOr<std::unique_ptr<ExportApi>> ExportApi::Create(Deps deps) {
  auto api = std::make_unique<ExportApi>(std::move(deps));
  if (!api->init_status().ok()) return api->init_status();
  return api;
}

ExportApi::~ExportApi() = default;

void ExportApi::Register(httplib::Server& server) { handlers_->Register(server); }

}  // namespace export_center::api
