#include "source/provider/provider_batch_source.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/json_dump.h"
#include "common/nesting.h"
#include "common/utf8.h"
#include "source/common/business_reply.h"
#include "source/common/service_client.h"

namespace export_center::source {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxSnapshotTokenChars = 512;
constexpr size_t kMaxCursorChars = 1024;
constexpr size_t kMaxSchemaHashChars = 256;
constexpr int kSupportedSchemaVersion = 1;

// Every field, the rich options included: the file's header, merges and
// labels were fixed by the first batch.
bool SameColumns(const std::vector<task::Column>& a, const std::vector<task::Column>& b) {
  return a == b;
}

// An optional string-or-null field; a number is taken by its text (cursors).
StatusOr<std::optional<std::string>> OptionalText(const json& data, const char* name,
                                                  size_t max_chars, bool allow_number) {
  auto it = data.find(name);
  if (it == data.end() || it->is_null()) return std::optional<std::string>();
  if (it->is_string()) {
    const auto& s = it->get_ref<const std::string&>();
    if (s.size() > max_chars) {
      return InvalidArgument(std::string(name) + " is longer than " + std::to_string(max_chars) +
                             " characters");
    }
    return std::optional<std::string>(s);
  }
  if (allow_number && it->is_number_integer()) return std::optional<std::string>(it->dump());
  return InvalidArgument(std::string(name) + " is not a string");
}

StatusOr<std::optional<int64_t>> OptionalCount(const json& data, const char* name) {
  auto it = data.find(name);
  if (it == data.end() || it->is_null()) return std::optional<int64_t>();
  if (it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
    return std::optional<int64_t>(it->get<int64_t>());
  }
  if (it->is_string()) {
    const auto& s = it->get_ref<const std::string&>();
    int64_t v = 0;
    auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!s.empty() && res.ec == std::errc() && res.ptr == s.data() + s.size() && v >= 0) {
      return std::optional<int64_t>(v);
    }
  }
  return InvalidArgument(std::string(name) + " is not a non-negative integer");
}

// A simdjson value as a nlohmann::json: for the small parts of an answer
// the checks read, and one cell at a time for ParseWireValue.
// The element's type was just read, so each get() below succeeds. Recursive:
// ReadAnswer refused an answer nested deeper than kMaxNesting before.
json ToJson(simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::ARRAY: {
      json out = json::array();
      simdjson::dom::array array;
      if (e.get(array) == simdjson::SUCCESS) {
        for (simdjson::dom::element item : array) out.push_back(ToJson(item));
      }
      return out;
    }
    case simdjson::dom::element_type::OBJECT: {
      json out = json::object();
      simdjson::dom::object object;
      if (e.get(object) == simdjson::SUCCESS) {
        for (simdjson::dom::key_value_pair field : object) {
          out[std::string(field.key)] = ToJson(field.value);
        }
      }
      return out;
    }
    case simdjson::dom::element_type::INT64: {
      // nlohmann reads a non-negative integer as unsigned: keep its view.
      int64_t v = 0;
      if (e.get(v) == simdjson::SUCCESS) return v >= 0 ? json(static_cast<uint64_t>(v)) : json(v);
      break;
    }
    case simdjson::dom::element_type::UINT64: {
      uint64_t v = 0;
      if (e.get(v) == simdjson::SUCCESS) return v;
      break;
    }
    case simdjson::dom::element_type::DOUBLE: {
      double v = 0;
      if (e.get(v) == simdjson::SUCCESS) return v;
      break;
    }
    case simdjson::dom::element_type::STRING: {
      std::string_view v;
      if (e.get(v) == simdjson::SUCCESS) return std::string(v);
      break;
    }
    case simdjson::dom::element_type::BOOL: {
      bool v = false;
      if (e.get(v) == simdjson::SUCCESS) return v;
      break;
    }
    case simdjson::dom::element_type::NULL_VALUE:
      break;
  }
  return nullptr;
}

// The raw answer to one batch call.
struct HttpAnswer {
  int status = 0;
  std::string body;
};

class ProviderBatchSource : public RowSource {
 public:
  ProviderBatchSource(ProviderBatchOptions options, http::HttpClientFactory* http)
      : options_(std::move(options)), http_(http) {
    // simdjson refuses nesting past kMaxNesting itself, while it reads
    // (DEPTH_ERROR; it keeps the bound when it grows): the fast path pays
    // nothing for the bound. Should this fail, ReadAnswer checks the text.
    parser_bounded_ = parser_.allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, kMaxNesting) ==
                      simdjson::SUCCESS;
    auto parsed = ParseJsonWithin<json>(options_.parameters_json);
    parameters_ = parsed.ok() ? std::move(parsed).value() : json(json::value_t::discarded);
  }

  // RowSource:
  const std::vector<task::Column>& columns() const override { return columns_; }
  StatusOr<Page> NextPage() override;

 private:
  StatusOr<Page> FetchPage(ProviderBatchStats* stats);
  Status EnsureClient();
  json RequestBody() const;
  StatusOr<HttpAnswer> Post(const std::string& body);
  StatusOr<json> OpenEnvelope(const HttpAnswer& answer);
  StatusOr<json> ReadAnswer(const std::string& body);
  Status CheckSchema(const json& data);
  StatusOr<std::vector<task::Row>> ParseRows(const json& data);
  StatusOr<std::vector<task::Row>> ParseFastRows();
  StatusOr<task::Row> ParseFastRow(simdjson::dom::element in, size_t index);
  Status AdvanceCursor(const json& data, bool has_more);

  ProviderBatchOptions options_;
  http::HttpClientFactory* http_;  // not owned
  json parameters_;
  std::unique_ptr<http::HttpClient> client_;
  // The answer is parsed by simdjson: data.rows stay in the parser's
  // buffers (valid until the next batch) and are converted cell by cell.
  simdjson::dom::parser parser_;
  bool parser_bounded_ = false;  // parser_'s max depth is kMaxNesting
  std::optional<simdjson::dom::array> fast_rows_;
  std::vector<task::Column> columns_;
  std::unordered_map<std::string_view, size_t> column_of_;  // key → index, into columns_
  std::optional<std::string> schema_hash_;
  std::optional<std::string> snapshot_token_;
  std::optional<std::string> cursor_;
  std::set<std::string> seen_cursors_;
  int64_t emitted_rows_ = 0;
  bool first_ = true;
  bool done_ = false;
  bool warned_unknown_keys_ = false;
};

StatusOr<Page> ProviderBatchSource::NextPage() {
  ProviderBatchStats stats;
  stats.export_type = options_.export_type;
  auto start = Clock::now();
  StatusOr<Page> page = FetchPage(&stats);
  stats.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  stats.code = page.ok() ? StatusCode::kOk : page.status().code();
  if (page.ok()) stats.rows = static_cast<int>(page->rows.size());
  if (options_.on_batch) options_.on_batch(stats);
  if (!page.ok()) {
    // A quoted cell value is left out: this source does not know whether its
    // column is governed (the attempt's own line, after the column policy, has
    // it when the requester may see it).
    spdlog::warn("provider batch failed taskId={} exportType={} dispatchVersion={}: {}",
                 options_.task_id, options_.export_type, options_.dispatch_version,
                 page.status().WithoutQuotedValue("[value not logged here]").ToString());
  }
  return page;
}

StatusOr<Page> ProviderBatchSource::FetchPage(ProviderBatchStats* stats) {
  if (done_) return Internal("NextPage called after the last page");
  if (parameters_.is_discarded() || !parameters_.is_object()) {
    return InvalidArgument("task parameters are not a JSON object");
  }
  EC_RETURN_IF_ERROR(EnsureClient());
  EC_ASSIGN_OR_RETURN(HttpAnswer answer, Post(DumpTolerant(RequestBody())));
  stats->response_bytes = static_cast<int64_t>(answer.body.size());
  EC_ASSIGN_OR_RETURN(json data, OpenEnvelope(answer));
  EC_RETURN_IF_ERROR(CheckSchema(data));

  Page page;
  auto has_more = data.find("hasMore");
  if (has_more == data.end() || !has_more->is_boolean()) {
    return InvalidArgument("provider data lacks boolean hasMore");
  }
  page.has_more = has_more->get<bool>();
  EC_ASSIGN_OR_RETURN(page.rows, ParseRows(data));
  EC_ASSIGN_OR_RETURN(page.total_rows, OptionalCount(data, "totalRows"));
  EC_RETURN_IF_ERROR(AdvanceCursor(data, page.has_more));

  if (emitted_rows_ + static_cast<int64_t>(page.rows.size()) > options_.max_rows) {
    return LimitExceeded("export exceeds the max-rows limit of " +
                         std::to_string(options_.max_rows) + " rows");
  }
  emitted_rows_ += static_cast<int64_t>(page.rows.size());
  if (first_) page.facts.emplace();  // a provider reports nothing beside its rows
  first_ = false;
  done_ = !page.has_more;
  return page;
}

Status ProviderBatchSource::EnsureClient() {
  if (client_) return Status::Ok();
  const std::string& base = options_.service.base_url;
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0) {
    return InvalidArgument("provider service '" + options_.service.name +
                           "' has no http(s) base URL");
  }
  auto client = http_->NewClient(ServiceClientOptions(base, options_.client.connect_timeout_ms,
                                                      options_.client.read_timeout_ms));
  if (!client.ok()) return InvalidArgument("provider base URL is not valid: " + base);
  client_ = std::move(*client);
  return Status::Ok();
}

json ProviderBatchSource::RequestBody() const {
  auto text_or_null = [](const std::optional<std::string>& v) { return v ? json(*v) : json(); };
  return json{
      {"taskId", std::to_string(options_.task_id)},
      {"tenantId", options_.tenant_id},
      {"appCode", std::string(task::ToString(options_.app_code))},
      {"requestedBy", options_.requested_by},
      {"dispatchVersion", options_.dispatch_version},
      {"parameters", parameters_},
      {"cursor", text_or_null(cursor_)},
      {"snapshotToken", text_or_null(snapshot_token_)},
      {"limit", options_.batch_size},
  };
}

StatusOr<HttpAnswer> ProviderBatchSource::Post(const std::string& body) {
  const int64_t max_bytes = options_.client.max_response_bytes;
  // The read timeout bounds each silent gap; this bounds a provider that
  // trickles bytes forever.
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.client.connect_timeout_ms +
                                               2LL * options_.client.read_timeout_ms);
  http::ClientRequest request;
  request.method = "POST";
  request.path = options_.service.base_path + options_.path;
  request.headers.Add("X-Internal-Service-Token", options_.service.internal_token);
  request.headers.Add("Accept", "application/json");
  request.content_type = "application/json";
  request.body = body;
  request.deadline = deadline;
  request.max_body_bytes = max_bytes;
  http::ClientAnswer capped = client_->Send(request);
  if (capped.status >= 500) return BusinessError(capped.status, "provider answered HTTP", "");
  switch (capped.outcome) {
    case http::ClientAnswer::Outcome::kTooLarge:
      return InvalidArgument("provider response exceeds " + std::to_string(max_bytes) + " bytes");
    case http::ClientAnswer::Outcome::kTooSlow:
      return Unavailable("provider response took too long to arrive");
    case http::ClientAnswer::Outcome::kNotSent:
      return Unavailable("provider call failed: " + capped.error_text);
    case http::ClientAnswer::Outcome::kRead:
      break;
  }
  return HttpAnswer{capped.status, std::move(capped.body)};
}

// The envelope as a nlohmann::json, except data.rows, which stay simdjson
// elements in fast_rows_ (no DOM node per cell). A body simdjson cannot
// take (malformed, a number past 64 bits) goes the whole nlohmann way, so
// every answer is judged exactly as before. An answer nested deeper than
// kMaxNesting is refused on either path before a tree exists
// (common/nesting.h): the conversions and dumps that follow recurse once per
// level.
StatusOr<json> ProviderBatchSource::ReadAnswer(const std::string& body) {
  fast_rows_.reset();
  if (!parser_bounded_) EC_RETURN_IF_ERROR(CheckJsonNesting(body));
  simdjson::dom::element doc;
  const simdjson::error_code read = parser_.parse(body).get(doc);
  if (read == simdjson::DEPTH_ERROR) return NestingTooDeep("JSON", kMaxNesting);
  if (read != simdjson::SUCCESS) return ParseJsonWithin<json>(body);
  simdjson::dom::object root;
  if (doc.get(root) != simdjson::SUCCESS) return ToJson(doc);
  json envelope = json::object();
  for (simdjson::dom::key_value_pair field : root) {
    if (field.key == "data") fast_rows_.reset();  // a repeated key: the last one counts
    simdjson::dom::object fields;
    if (field.key != "data" || field.value.get(fields) != simdjson::SUCCESS) {
      envelope[std::string(field.key)] = ToJson(field.value);
      continue;
    }
    json data = json::object();
    for (simdjson::dom::key_value_pair item : fields) {
      simdjson::dom::array rows;
      if (item.key == "rows" && item.value.get(rows) == simdjson::SUCCESS) {
        fast_rows_ = rows;
        data.erase("rows");
        continue;
      }
      if (item.key == "rows") fast_rows_.reset();
      data[std::string(item.key)] = ToJson(item.value);
    }
    envelope["data"] = std::move(data);
  }
  return envelope;
}

StatusOr<json> ProviderBatchSource::OpenEnvelope(const HttpAnswer& answer) {
  StatusOr<json> read = ReadAnswer(answer.body);
  json body = read.ok() ? std::move(read).value() : json(json::value_t::discarded);
  bool is_envelope = !body.is_discarded() && body.is_object();
  if (answer.status != 200) {
    return BusinessError(answer.status, "provider answered HTTP",
                         is_envelope ? EnvelopeMessage(body) : "");
  }
  if (!read.ok()) return read.status().WithContext("provider answer");
  if (!is_envelope) {
    // JSON is UTF-8 (RFC 8259): bytes that are not are a clear failure, not U+FFFD.
    return InvalidArgument(utf8::IsValid(answer.body) ? "provider answer is not a JSON envelope"
                                                      : "provider answer is not valid UTF-8");
  }
  auto code = EnvelopeCode(body);
  if (!code) return InvalidArgument("provider envelope lacks a code");
  if (*code != 200) return BusinessError(*code, "provider answered code", EnvelopeMessage(body));
  auto data = body.find("data");
  if (data == body.end() || !data->is_object()) {
    return InvalidArgument("provider envelope lacks a data object");
  }
  return std::move(*data);
}

Status ProviderBatchSource::CheckSchema(const json& data) {
  auto version = data.find("schemaVersion");
  if (version != data.end() && !version->is_null() &&
      !(version->is_number_integer() && version->get<int64_t>() == kSupportedSchemaVersion)) {
    return InvalidArgument("provider schemaVersion " + utf8::Excerpt(DumpTolerant(*version), 64) +
                           " is not supported");
  }
  auto hash = data.find("schemaHash");
  if (hash == data.end() || !hash->is_string() || hash->get_ref<const std::string&>().empty() ||
      hash->get_ref<const std::string&>().size() > kMaxSchemaHashChars) {
    return InvalidArgument("provider data lacks a schemaHash");
  }
  // The columns define every later batch: a change mid-export means the
  // provider was redeployed with new columns, and the file would be garbage.
  if (schema_hash_ && *schema_hash_ != hash->get<std::string>()) {
    return InvalidArgument("provider schemaHash changed during the export");
  }
  auto columns = data.find("columns");
  bool has_columns = columns != data.end() && !columns->is_null();
  if (first_ && !has_columns) return InvalidArgument("provider's first batch lacks columns");
  if (has_columns) {
    auto parsed = task::ParseWireColumns(*columns, options_.languages.locale,
                                         options_.languages.default_language);
    if (!parsed.ok()) return parsed.status().WithContext("provider columns");
    if (!first_ && !SameColumns(*parsed, columns_)) {
      return InvalidArgument("provider columns changed during the export");
    }
    if (first_) columns_ = std::move(parsed).value();
  }
  if (first_) {
    schema_hash_ = hash->get<std::string>();
    EC_ASSIGN_OR_RETURN(snapshot_token_,
                        OptionalText(data, "snapshotToken", kMaxSnapshotTokenChars, false));
    // Every later batch must read the snapshot the first one fixed; without
    // a token the file could mix data of several moments
    // (docs/provider-contract.md). A contract error, so not retried.
    if (!snapshot_token_ || snapshot_token_->empty()) {
      return InvalidArgument("provider's first batch lacks a snapshotToken");
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<task::Row>> ProviderBatchSource::ParseRows(const json& data) {
  if (fast_rows_) return ParseFastRows();
  auto rows = data.find("rows");
  if (rows == data.end() || !rows->is_array()) return InvalidArgument("provider data lacks rows");
  if (rows->size() > static_cast<size_t>(options_.batch_size)) {
    return InvalidArgument("provider returned " + std::to_string(rows->size()) +
                           " rows, more than the batch limit of " +
                           std::to_string(options_.batch_size));
  }
  std::vector<task::Row> out;
  out.reserve(rows->size());
  for (size_t i = 0; i < rows->size(); ++i) {
    const json& in = (*rows)[i];
    std::string where = "row " + std::to_string(emitted_rows_ + static_cast<int64_t>(i) + 1);
    if (!in.is_object()) return InvalidArgument(where + " is not a JSON object");
    task::Row row;
    row.reserve(columns_.size());
    size_t found = 0;
    for (const auto& column : columns_) {
      auto it = in.find(column.key);
      if (it == in.end()) {
        row.emplace_back();  // a missing key is an empty cell
        continue;
      }
      ++found;
      auto value = task::ParseWireValue(column, *it);
      if (!value.ok()) return value.status().WithContext(where);
      row.push_back(std::move(value).value());
    }
    if (found < in.size() && !warned_unknown_keys_) {
      // Extra keys are harmless (a newer provider), but worth one line.
      warned_unknown_keys_ = true;
      spdlog::warn(
          "provider rows carry keys outside the columns taskId={} exportType={} "
          "({} unknown in {})",
          options_.task_id, options_.export_type, in.size() - found, where);
    }
    out.push_back(std::move(row));
  }
  return out;
}

// As ParseRows, from the simdjson elements: same checks, same messages.
StatusOr<std::vector<task::Row>> ProviderBatchSource::ParseFastRows() {
  const simdjson::dom::array& rows = *fast_rows_;
  const size_t count = rows.size();
  if (count > static_cast<size_t>(options_.batch_size)) {
    return InvalidArgument("provider returned " + std::to_string(count) +
                           " rows, more than the batch limit of " +
                           std::to_string(options_.batch_size));
  }
  if (column_of_.size() != columns_.size()) {
    column_of_.clear();
    for (size_t c = 0; c < columns_.size(); ++c) column_of_.emplace(columns_[c].key, c);
  }
  std::vector<task::Row> out;
  out.reserve(count);
  size_t i = 0;
  for (simdjson::dom::element in : rows) {
    EC_ASSIGN_OR_RETURN(task::Row row, ParseFastRow(in, i++));
    out.push_back(std::move(row));
  }
  return out;
}

StatusOr<task::Row> ProviderBatchSource::ParseFastRow(simdjson::dom::element in, size_t index) {
  auto where = [&] {
    return "row " + std::to_string(emitted_rows_ + static_cast<int64_t>(index) + 1);
  };
  simdjson::dom::object object;
  if (in.get(object) != simdjson::SUCCESS)
    return InvalidArgument(where() + " is not a JSON object");
  task::Row row(columns_.size());  // a missing key is an empty cell
  size_t fields = 0, found = 0;
  for (simdjson::dom::key_value_pair field : object) {
    ++fields;
    auto column = column_of_.find(field.key);
    if (column == column_of_.end()) continue;
    ++found;
    auto value = task::ParseWireValue(columns_[column->second], ToJson(field.value));
    if (!value.ok()) return value.status().WithContext(where());
    row[column->second] = std::move(value).value();
  }
  if (found < fields && !warned_unknown_keys_) {
    // Extra keys are harmless (a newer provider), but worth one line.
    warned_unknown_keys_ = true;
    spdlog::warn(
        "provider rows carry keys outside the columns taskId={} exportType={} "
        "({} unknown in {})",
        options_.task_id, options_.export_type, fields - found, where());
  }
  return row;
}

Status ProviderBatchSource::AdvanceCursor(const json& data, bool has_more) {
  EC_ASSIGN_OR_RETURN(auto next, OptionalText(data, "nextCursor", kMaxCursorChars, true));
  if (!has_more) return Status::Ok();
  // Transient (docs/provider-contract.md#error-classes): a stuck cursor would loop forever, but a
  // later attempt against a fixed provider may succeed.
  if (!next || next->empty()) return Unavailable("provider hasMore=true without nextCursor");
  if (next == cursor_ || seen_cursors_.count(*next)) {
    return Unavailable("provider cursor did not advance");
  }
  seen_cursors_.insert(*next);
  cursor_ = std::move(next);
  return Status::Ok();
}

}  // namespace

ProviderBatchOptions MakeProviderBatchOptions(const registry::ProviderService& service,
                                              const registry::ExportDefinition& definition,
                                              const task::Task& task,
                                              const ProviderClientOptions& client) {
  ProviderBatchOptions o;
  o.service = service;
  o.path = definition.path;
  o.export_type = definition.name;
  o.task_id = task.id;
  o.tenant_id = task.tenant_id;
  o.app_code = task.app_code;
  o.requested_by = task.requested_by;
  o.dispatch_version = task.dispatch_version;
  o.parameters_json = task.parameters_json.empty() ? "{}" : task.parameters_json;
  o.languages = registry::LanguagesFor(definition, task);
  o.batch_size = definition.batch_size;
  o.max_rows = definition.max_rows;
  o.client = client;
  return o;
}

ProviderBatchOptions MakeProviderBatchOptions(const registry::ProviderService& service,
                                              const registry::ExportDefinition& definition,
                                              const SourceRequest& request,
                                              const ProviderClientOptions& client) {
  ProviderBatchOptions o = MakeProviderBatchOptions(service, definition, *request.task, client);
  o.batch_size = request.batch_size;
  o.max_rows = request.max_rows;
  return o;
}

std::unique_ptr<RowSource> NewProviderBatchSource(const ProviderBatchOptions& options,
                                                  http::HttpClientFactory* http) {
  return std::make_unique<ProviderBatchSource>(options, http);
}

}  // namespace export_center::source
