#include "s3/s3_client.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>
#include <pugixml.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "common/mutex.h"
#include "common/nesting.h"

namespace export_center::s3 {
namespace {

// Idle keep-alive connections kept per client: enough for the consumers'
// uploads, the API's downloads and the reconciler at once.
constexpr size_t kMaxIdleConnections = 16;
// Attempts of an idempotent call that failed transiently, and the pause
// before each retry.
constexpr int kAttempts = 3;
constexpr std::chrono::milliseconds kRetryPause[] = {std::chrono::milliseconds(200),
                                                     std::chrono::milliseconds(800)};

int64_t NowSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

// The largest XML answer read: a listing of 1000 keys with long names is
// well under it.
constexpr int64_t kMaxXmlAnswerBytes = 16LL * 1024 * 1024;

}  // namespace

// One S3 request before signing: path already encoded, query raw.
struct S3Client::Call {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // signed as well as sent
  std::string body;
  std::string what;  // "PUT exports/…" for messages
  bool idempotent = true;
  // The most an answer's body may hold: S3's XML answers are small; a
  // ranged GET's is its range.
  int64_t max_answer_bytes = kMaxXmlAnswerBytes;
};

struct S3Client::Reply {
  int status = 0;
  std::string body;
  http::HeaderMap headers;

  std::string Header(const std::string& name) const { return headers.Get(name); }
};

// Keep-alive connections to the endpoint, each an HttpClient of the seam; a
// connection serves one call at a time.
class S3Client::Pool {
 public:
  Pool(std::string base_url, const S3ClientOptions& options) : options_(options) {
    client_options_.base_url = std::move(base_url);
    client_options_.connect_timeout_ms = options.connect_timeout_ms;
    client_options_.read_timeout_ms = options.io_timeout_ms;
    client_options_.write_timeout_ms = options.io_timeout_ms;
    client_options_.keep_alive = true;
    // A part's headers and body go out as two writes: without this, delayed
    // ACK would add ~40 ms to every call on a kept-alive connection.
    client_options_.tcp_nodelay = true;
    client_options_.tls = options.tls;
  }

  StatusOr<std::unique_ptr<http::HttpClient>> Acquire() {
    {
      MutexLock lock(&mu_);
      if (!idle_.empty()) {
        auto client = std::move(idle_.back());
        idle_.pop_back();
        return client;
      }
    }
    return options_.http->NewClient(client_options_);
  }

  void Release(std::unique_ptr<http::HttpClient> client) {
    MutexLock lock(&mu_);
    if (idle_.size() < kMaxIdleConnections) idle_.push_back(std::move(client));
  }

  const std::string& base_url() const { return client_options_.base_url; }

 private:
  const S3ClientOptions& options_;
  http::HttpClientOptions client_options_;
  Mutex mu_;
  std::vector<std::unique_ptr<http::HttpClient>> idle_ GUARDED_BY(mu_);
};

namespace {

struct S3ErrorBody {
  std::string code;
  std::string message;
};

S3ErrorBody ParseErrorBody(const std::string& body) {
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size())) return {};
  if (!CheckTreeNesting(doc.root(), "XML").ok()) return {};  // as ParseXml
  pugi::xml_node error = doc.child("Error");
  return {error.child_value("Code"), error.child_value("Message")};
}

}  // namespace

// Every S3 answer that is not a success becomes a Status here, in one place.
Status S3Error(const std::string& what, int status, const std::string& body) {
  const S3ErrorBody e = ParseErrorBody(body);
  std::string message = "s3 " + what + ": HTTP " + std::to_string(status);
  if (!e.code.empty()) message += " " + e.code;
  if (!e.message.empty()) message += ": " + e.message;
  if (status == 404 && e.code == "NoSuchBucket") return Internal(std::move(message));
  if (status == 404) return NotFound(std::move(message));
  if (status == 403) return PermissionDenied(std::move(message));
  if (status >= 500 || status == 429 || e.code == "SlowDown")
    return Unavailable(std::move(message));
  if (status >= 400) return InvalidArgument(std::move(message));
  return Internal(std::move(message));
}

namespace {

StatusOr<pugi::xml_document> ParseXml(const std::string& what, const std::string& body) {
  pugi::xml_document doc;
  pugi::xml_parse_result parsed = doc.load_buffer(body.data(), body.size());
  if (!parsed) {
    return Internal("s3 " + what + ": unreadable XML answer (" + parsed.description() + ")");
  }
  // Read at fixed paths, nothing recursive; refused anyway past kMaxNesting,
  // like every tree the center builds from outside bytes (common/nesting.h).
  if (Status nesting = CheckTreeNesting(doc.root(), "XML answer"); !nesting.ok()) {
    return Internal("s3 " + what + ": " + nesting.message());
  }
  return doc;
}

uint64_t ParseSize(const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  return end == text ? 0 : static_cast<uint64_t>(v);
}

}  // namespace

int64_t ParseS3Time(std::string_view text) {
  std::tm tm{};
  const std::string s(text);
  int millis = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) == 6) {
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    if (s.size() > 20 && s[19] == '.') millis = std::atoi(s.substr(20, 3).c_str());
  } else if (strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S", &tm) == nullptr) {
    return 0;
  }
  return static_cast<int64_t>(timegm(&tm)) * 1000 + millis;
}

StatusOr<ObjectPage> ParseListObjectsAnswer(const std::string& what, const std::string& body) {
  EC_ASSIGN_OR_RETURN(pugi::xml_document doc, ParseXml(what, body));
  pugi::xml_node result = doc.child("ListBucketResult");
  if (!result) return Internal("s3 " + what + ": no ListBucketResult in the answer");
  ObjectPage page;
  for (pugi::xml_node c : result.children("Contents")) {
    page.objects.push_back(ObjectInfo{c.child_value("Key"), ParseSize(c.child_value("Size")),
                                      ParseS3Time(c.child_value("LastModified"))});
  }
  if (std::string(result.child_value("IsTruncated")) == "true") {
    page.next_continuation_token = result.child_value("NextContinuationToken");
    if (page.next_continuation_token.empty()) {
      return Internal("s3 " + what + ": truncated listing without a continuation token");
    }
  }
  return page;
}

StatusOr<std::string> ParseCreateMultipartUploadAnswer(const std::string& what,
                                                       const std::string& body) {
  EC_ASSIGN_OR_RETURN(pugi::xml_document doc, ParseXml(what, body));
  std::string upload_id = doc.child("InitiateMultipartUploadResult").child_value("UploadId");
  if (upload_id.empty()) return Internal("s3 " + what + ": no UploadId in the answer");
  return upload_id;
}

Status ParseCompleteMultipartUploadAnswer(const std::string& what, const std::string& body) {
  // S3 may answer 200 and still fail: the error is then in the body.
  const S3ErrorBody error = ParseErrorBody(body);
  if (!error.code.empty()) return S3Error(what, 500, body);
  return Status::Ok();
}

StatusOr<UploadPage> ParseListMultipartUploadsAnswer(const std::string& what,
                                                     const std::string& body) {
  EC_ASSIGN_OR_RETURN(pugi::xml_document doc, ParseXml(what, body));
  pugi::xml_node result = doc.child("ListMultipartUploadsResult");
  if (!result) return Internal("s3 " + what + ": no ListMultipartUploadsResult in the answer");
  UploadPage page;
  for (pugi::xml_node u : result.children("Upload")) {
    page.uploads.push_back(MultipartUpload{u.child_value("Key"), u.child_value("UploadId"),
                                           ParseS3Time(u.child_value("Initiated"))});
  }
  page.truncated = std::string(result.child_value("IsTruncated")) == "true";
  page.next_key_marker = result.child_value("NextKeyMarker");
  page.next_upload_id_marker = result.child_value("NextUploadIdMarker");
  return page;
}

namespace {

// Where requests to one endpoint go: its scheme and the Host header.
struct Origin {
  std::string scheme;  // "http" or "https"
  std::string host;    // host[:port], "bucket." prefixed unless path-style
};

// `what` names the option in the message ("endpoint", "presign endpoint").
StatusOr<Origin> ParseEndpoint(const std::string& what, const std::string& endpoint,
                               const std::string& bucket, bool path_style) {
  static const std::regex kEndpoint(
      R"(^(https?)://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?/?$)");
  std::smatch m;
  if (!std::regex_match(endpoint, m, kEndpoint)) {
    return InvalidArgument("s3: " + what + " \"" + endpoint + "\" is not http(s)://host[:port]");
  }
  const std::string host_port = m[2].str() + m[3].str();
  return Origin{m[1].str(), path_style ? host_port : bucket + "." + host_port};
}

}  // namespace

StatusOr<std::unique_ptr<S3Client>> S3Client::Create(S3ClientOptions options) {
  EC_ASSIGN_OR_RETURN(const Origin origin, ParseEndpoint("endpoint", options.endpoint,
                                                         options.bucket, options.path_style));
  EC_ASSIGN_OR_RETURN(
      const Origin presign_origin,
      ParseEndpoint("presign endpoint",
                    options.presign_endpoint.empty() ? options.endpoint : options.presign_endpoint,
                    options.bucket, options.path_style));
  static const std::regex kBucket(R"(^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$)");
  if (!std::regex_match(options.bucket, kBucket)) {
    return InvalidArgument("s3: bucket \"" + options.bucket +
                           "\" is not a valid bucket name (3..63 of a-z 0-9 . -)");
  }
  if (options.credentials.access_key.empty() || options.credentials.secret_key.empty()) {
    return InvalidArgument("s3: access key and secret key are required");
  }
  if (options.region.empty()) return InvalidArgument("s3: region is required");
  if (options.http == nullptr) return InvalidArgument("s3: no HttpClientFactory");
  std::unique_ptr<S3Client> client(new S3Client(std::move(options)));
  client->host_ = origin.host;
  client->base_url_ = origin.scheme + "://" + origin.host;
  client->presign_host_ = presign_origin.host;
  client->presign_base_url_ = presign_origin.scheme + "://" + presign_origin.host;
  client->pool_ = std::make_unique<Pool>(client->base_url_, client->options_);
  return client;
}

S3Client::S3Client(S3ClientOptions options) : options_(std::move(options)) {
  if (!options_.now_seconds) options_.now_seconds = NowSeconds;
}

S3Client::~S3Client() = default;

std::string S3Client::BucketPath() const {
  return options_.path_style ? "/" + options_.bucket : "/";
}

std::string S3Client::ObjectPath(const std::string& key) const {
  return (options_.path_style ? "/" + options_.bucket + "/" : "/") + UriEncode(key, true);
}

namespace {

// Why a call got no answer, for the message: a TLS failure names what the
// certificate was checked against, the usual cause being the wrong CA.
std::string NotSentReason(const http::ClientAnswer& answer, const http::ClientTlsSettings& tls) {
  if (answer.error != http::ClientError::kTls) return answer.error_text;
  return "TLS handshake or certificate verification failed (the certificate was checked against " +
         (tls.ca_cert_file.empty() ? std::string("the system trust store")
                                   : "the CA file " + tls.ca_cert_file) +
         ")";
}

}  // namespace

StatusOr<S3Client::Reply> S3Client::ExecuteOnce(Call& call) {
  const std::string amz_date = AmzDate(options_.now_seconds());
  SignableRequest signable{call.method, call.path, call.query, call.headers, Sha256Hex(call.body)};
  signable.headers["host"] = host_;
  signable.headers["x-amz-date"] = amz_date;
  signable.headers["x-amz-content-sha256"] = signable.payload_hash;

  http::ClientRequest request;
  request.method = call.method;
  request.path = call.path;
  if (!call.query.empty()) request.path += "?" + CanonicalQueryString(call.query);
  for (const auto& [name, value] : signable.headers) request.headers.Add(name, value);
  request.headers.Add("Authorization",
                      AuthorizationHeader(signable, options_.credentials,
                                          SigningScope{options_.region, "s3"}, amz_date));
  if (call.method == "PUT") request.content_type = "application/octet-stream";
  request.max_body_bytes = call.max_answer_bytes;
  // Lent, not copied: a part is megabytes, and a copy per part in flight
  // would break the writer's memory bound (docs/storage.md#s3).
  request.body = std::move(call.body);

  StatusOr<std::unique_ptr<http::HttpClient>> client = pool_->Acquire();
  if (!client.ok()) {
    call.body = std::move(request.body);
    return Internal("s3 " + call.what + ": " + client.status().message());
  }
  http::ClientAnswer answer = (*client)->Send(request);
  call.body = std::move(request.body);
  switch (answer.outcome) {
    case http::ClientAnswer::Outcome::kRead:
      pool_->Release(std::move(*client));
      return Reply{answer.status, std::move(answer.body), std::move(answer.headers)};
    case http::ClientAnswer::Outcome::kTooLarge:
      // Reading stopped mid-body: the connection is not reusable.
      return Internal("s3 " + call.what + ": the answer's body passed " +
                      std::to_string(call.max_answer_bytes) + " bytes (HTTP " +
                      std::to_string(answer.status) + ")");
    case http::ClientAnswer::Outcome::kTooSlow:
    case http::ClientAnswer::Outcome::kNotSent:
      break;
  }
  // The connection may be half-dead: it is not given back to the pool.
  return Unavailable("s3 " + call.what + ": " + NotSentReason(answer, options_.tls) + " (" +
                     base_url_ + ")");
}

StatusOr<S3Client::Reply> S3Client::Execute(Call& call) {
  for (int attempt = 1;; ++attempt) {
    StatusOr<Reply> reply = ExecuteOnce(call);
    Status status = reply.ok() && reply->status >= 300
                        ? S3Error(call.what, reply->status, reply->body)
                        : reply.status();
    if (status.ok()) return reply;
    if (status.code() != StatusCode::kUnavailable || !call.idempotent || attempt == kAttempts) {
      return status;
    }
    std::this_thread::sleep_for(kRetryPause[attempt - 1]);
  }
}

Status S3Client::PutObject(const std::string& key, std::string body) {
  Call call{"PUT", ObjectPath(key), {}, {}, std::move(body), "PUT " + key};
  return Execute(call).status();
}

StatusOr<ObjectInfo> S3Client::HeadObject(const std::string& key) {
  Call call{"HEAD", ObjectPath(key), {}, {}, "", "HEAD " + key};
  // No body comes, but Content-Length is the object's size.
  call.max_answer_bytes = std::numeric_limits<int64_t>::max();
  EC_ASSIGN_OR_RETURN(Reply reply, Execute(call));
  return ObjectInfo{key, ParseSize(reply.Header("Content-Length").c_str()),
                    ParseS3Time(reply.Header("Last-Modified"))};
}

Status S3Client::GetObjectRange(const std::string& key, uint64_t offset, uint64_t length,
                                std::string* out) {
  out->clear();
  if (length == 0) return Status::Ok();
  Call call{"GET", ObjectPath(key), {}, {}, "", "GET " + key};
  call.headers["range"] =
      "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1);
  // A store that ignores the range answers from byte 0: the slice asked for
  // is still within the first offset + length bytes. An error's XML may be
  // longer than a small range.
  call.max_answer_bytes = std::max(static_cast<int64_t>(offset + length), kMaxXmlAnswerBytes);
  StatusOr<Reply> reply = Execute(call);
  if (!reply.ok()) {
    // 416: the range starts at or past the end, which ReadAt answers with nothing.
    if (reply.status().message().find("HTTP 416") != std::string::npos) return Status::Ok();
    return reply.status();
  }
  if (reply->status == 206) {
    *out = std::move(reply->body);
  } else if (offset < reply->body.size()) {  // a server that ignored the range
    *out = reply->body.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
  }
  if (out->size() > length) out->resize(static_cast<size_t>(length));
  return Status::Ok();
}

Status S3Client::DeleteObject(const std::string& key) {
  Call call{"DELETE", ObjectPath(key), {}, {}, "", "DELETE " + key};
  Status status = Execute(call).status();
  return status.code() == StatusCode::kNotFound ? Status::Ok() : status;
}

StatusOr<ObjectPage> S3Client::ListObjects(const std::string& prefix,
                                           const std::string& continuation_token, int max_keys) {
  Call call{"GET", BucketPath(), {}, {}, "", "LIST " + prefix};
  call.query.emplace("list-type", "2");
  call.query.emplace("prefix", prefix);
  call.query.emplace("max-keys", std::to_string(max_keys));
  if (!continuation_token.empty()) call.query.emplace("continuation-token", continuation_token);
  EC_ASSIGN_OR_RETURN(Reply reply, Execute(call));
  return ParseListObjectsAnswer(call.what, reply.body);
}

StatusOr<std::string> S3Client::CreateMultipartUpload(const std::string& key) {
  Call call{"POST", ObjectPath(key), {{"uploads", ""}}, {}, "", "CreateMultipartUpload " + key};
  call.idempotent = false;  // a retry could leave an extra upload behind
  EC_ASSIGN_OR_RETURN(Reply reply, Execute(call));
  return ParseCreateMultipartUploadAnswer(call.what, reply.body);
}

StatusOr<std::string> S3Client::UploadPart(const std::string& key, const std::string& upload_id,
                                           int part_number, std::string* body) {
  Call call{"PUT",
            ObjectPath(key),
            {{"partNumber", std::to_string(part_number)}, {"uploadId", upload_id}},
            {},
            std::move(*body),
            "UploadPart " + std::to_string(part_number) + " of " + key};
  StatusOr<Reply> sent = Execute(call);
  *body = std::move(call.body);
  EC_ASSIGN_OR_RETURN(Reply reply, std::move(sent));
  std::string etag = reply.Header("ETag");
  if (etag.empty()) return Internal("s3 " + call.what + ": no ETag in the answer");
  return etag;
}

Status S3Client::CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                         const std::vector<CompletedPart>& parts) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("CompleteMultipartUpload");
  for (const CompletedPart& part : parts) {
    pugi::xml_node p = root.append_child("Part");
    p.append_child("PartNumber").text().set(part.number);
    p.append_child("ETag").text().set(part.etag.c_str());
  }
  std::ostringstream xml;
  doc.save(xml, "", pugi::format_raw);
  Call call{"POST",
            ObjectPath(key),
            {{"uploadId", upload_id}},
            {{"content-type", "application/xml"}},
            xml.str(),
            "CompleteMultipartUpload " + key};
  call.idempotent = false;
  EC_ASSIGN_OR_RETURN(Reply reply, Execute(call));
  return ParseCompleteMultipartUploadAnswer(call.what, reply.body);
}

Status S3Client::AbortMultipartUpload(const std::string& key, const std::string& upload_id) {
  Call call{
      "DELETE", ObjectPath(key), {{"uploadId", upload_id}}, {}, "", "AbortMultipartUpload " + key};
  Status status = Execute(call).status();
  return status.code() == StatusCode::kNotFound ? Status::Ok() : status;
}

StatusOr<UploadPage> S3Client::ListMultipartUploads(const std::string& prefix,
                                                    const std::string& key_marker,
                                                    const std::string& upload_id_marker) {
  Call call{"GET", BucketPath(), {{"uploads", ""}, {"prefix", prefix}},
            {},    "",           "ListMultipartUploads " + prefix};
  // Only when paging: some stores (S3Proxy) refuse the markers but never truncate.
  if (!key_marker.empty()) call.query.emplace("key-marker", key_marker);
  if (!upload_id_marker.empty()) call.query.emplace("upload-id-marker", upload_id_marker);
  EC_ASSIGN_OR_RETURN(Reply reply, Execute(call));
  return ParseListMultipartUploadsAnswer(call.what, reply.body);
}

std::string S3Client::PresignGetUrl(const std::string& key, int64_t expires_seconds,
                                    const std::map<std::string, std::string>& response_headers) {
  SignableRequest request{"GET", ObjectPath(key), {}, {{"host", presign_host_}}, ""};
  for (const auto& [name, value] : response_headers) request.query.emplace(name, value);
  const std::string query =
      PresignedQuery(request, options_.credentials, SigningScope{options_.region, "s3"},
                     AmzDate(options_.now_seconds()), expires_seconds);
  return presign_base_url_ + request.path + "?" + query;
}

}  // namespace export_center::s3
