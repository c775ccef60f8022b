#include "mysql/mysql_client.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>

namespace export_center::mysql {
namespace {

// Result cells start in a buffer this size; longer values are fetched again
// at their real length, so TEXT columns do not cost 4 GiB of buffer each.
constexpr unsigned long kMinCellBuffer = 64;
constexpr unsigned long kMaxCellBuffer = 4096;

struct ResultDeleter {
  void operator()(MYSQL_RES* r) const { mysql_free_result(r); }
};
using ResultPtr = std::unique_ptr<MYSQL_RES, ResultDeleter>;

std::string PercentDecode(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    bool escape = in[i] == '%' && i + 2 < in.size() &&
                  std::isxdigit(static_cast<unsigned char>(in[i + 1])) &&
                  std::isxdigit(static_cast<unsigned char>(in[i + 2]));
    if (escape) {
      out += static_cast<char>(std::stoi(std::string(in.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

Status ParseOptions(std::string_view query, Url* out) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgument("MySQL URL option \"" + std::string(pair) + "\" is not key=value");
    }
    out->options.emplace_back(PercentDecode(pair.substr(0, eq)),
                              PercentDecode(pair.substr(eq + 1)));
  }
  return Status::Ok();
}

// "host", "host:port", "[v6]" or "[v6]:port".
Status ParseHostPort(std::string_view rest, Url* out) {
  std::optional<std::string_view> port;
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return InvalidArgument("MySQL URL has an unclosed [");
    out->host = std::string(rest.substr(1, close - 1));
    std::string_view after = rest.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      return InvalidArgument("MySQL URL has text after the ] of its host");
    }
    if (!after.empty()) port = after.substr(1);
  } else if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    out->host = std::string(rest.substr(0, colon));
    port = rest.substr(colon + 1);
  } else {
    out->host = std::string(rest);
  }
  if (out->host.empty()) return InvalidArgument("MySQL URL has no host");
  if (port) {
    bool digits = !port->empty() && port->size() <= 5 &&
                  std::all_of(port->begin(), port->end(),
                              [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    int value = digits ? std::stoi(std::string(*port)) : 0;
    if (value < 1 || value > 65535) {
      // The value is not shown: in a URL without '@' it may be a password.
      return InvalidArgument("MySQL URL has a bad port (1..65535 expected)");
    }
    out->port = static_cast<unsigned>(value);
  }
  return Status::Ok();
}

// The Param vectors are sized once so the bound addresses stay put.
struct ParamBuffers {
  explicit ParamBuffers(size_t n) : binds(n), ints(n), doubles(n), flags(n) {}
  std::vector<MYSQL_BIND> binds;
  std::vector<long long> ints;
  std::vector<double> doubles;
  std::vector<signed char> flags;
};

void BindParam(const Param& p, size_t i, ParamBuffers* b) {
  MYSQL_BIND& bind = b->binds[i];
  std::memset(&bind, 0, sizeof bind);
  if (std::holds_alternative<std::monostate>(p)) {
    bind.buffer_type = MYSQL_TYPE_NULL;
  } else if (const bool* v = std::get_if<bool>(&p)) {
    b->flags[i] = *v ? 1 : 0;
    bind.buffer_type = MYSQL_TYPE_TINY;
    bind.buffer = &b->flags[i];
  } else if (const int64_t* v = std::get_if<int64_t>(&p)) {
    b->ints[i] = *v;
    bind.buffer_type = MYSQL_TYPE_LONGLONG;
    bind.buffer = &b->ints[i];
  } else if (const double* v = std::get_if<double>(&p)) {
    b->doubles[i] = *v;
    bind.buffer_type = MYSQL_TYPE_DOUBLE;
    bind.buffer = &b->doubles[i];
  } else {
    const std::string& s = std::get<std::string>(p);
    bind.buffer_type = MYSQL_TYPE_STRING;
    // The library only reads the buffer; the API is not const-correct.
    bind.buffer = const_cast<char*>(s.data());
    bind.buffer_length = s.size();
  }
}

// Every result column is fetched as text into its own buffer.
struct ResultBuffers {
  explicit ResultBuffers(size_t n) : binds(n), cells(n), lengths(n), nulls(n), errors(n) {}
  std::vector<MYSQL_BIND> binds;
  std::vector<std::string> cells;
  std::vector<unsigned long> lengths;
  std::vector<my_bool> nulls;
  std::vector<my_bool> errors;
};

Error BindResults(MYSQL_STMT* stmt, const MYSQL_FIELD* fields, ResultBuffers* b) {
  for (size_t c = 0; c < b->binds.size(); ++c) {
    unsigned long size =
        std::clamp<unsigned long>(fields[c].length + 1, kMinCellBuffer, kMaxCellBuffer);
    b->cells[c].assign(size, '\0');
    MYSQL_BIND& bind = b->binds[c];
    std::memset(&bind, 0, sizeof bind);
    bind.buffer_type = MYSQL_TYPE_STRING;
    bind.buffer = b->cells[c].data();
    bind.buffer_length = size;
    bind.length = &b->lengths[c];
    bind.is_null = &b->nulls[c];
    bind.error = &b->errors[c];
  }
  if (mysql_stmt_bind_result(stmt, b->binds.data())) return ErrorOf(stmt);
  return {};
}

Error Cell(MYSQL_STMT* stmt, ResultBuffers* b, unsigned c, std::optional<std::string>* out) {
  if (b->nulls[c]) {
    out->reset();
    return {};
  }
  if (b->lengths[c] <= b->binds[c].buffer_length) {
    *out = std::string(b->cells[c].data(), b->lengths[c]);
    return {};
  }
  std::string full(b->lengths[c], '\0');
  MYSQL_BIND bind;
  std::memset(&bind, 0, sizeof bind);
  bind.buffer_type = MYSQL_TYPE_STRING;
  bind.buffer = full.data();
  bind.buffer_length = full.size();
  if (mysql_stmt_fetch_column(stmt, &bind, c, 0)) return ErrorOf(stmt);
  *out = std::move(full);
  return {};
}

Error FetchAll(MYSQL_STMT* stmt, MYSQL_RES* meta, Answer* answer) {
  unsigned n = mysql_num_fields(meta);
  const MYSQL_FIELD* fields = mysql_fetch_fields(meta);
  for (unsigned c = 0; c < n; ++c) {
    answer->columns.emplace_back(fields[c].name);
    answer->types.push_back(fields[c].type);
  }
  ResultBuffers buffers(n);
  if (Error e = BindResults(stmt, fields, &buffers); e.failed()) return e;
  if (mysql_stmt_store_result(stmt)) return ErrorOf(stmt);
  while (true) {
    int rc = mysql_stmt_fetch(stmt);
    if (rc == MYSQL_NO_DATA) break;
    if (rc != 0 && rc != MYSQL_DATA_TRUNCATED) return ErrorOf(stmt);
    std::vector<std::optional<std::string>> row(n);
    for (unsigned c = 0; c < n; ++c) {
      if (Error e = Cell(stmt, &buffers, c, &row[c]); e.failed()) return e;
    }
    answer->rows.push_back(std::move(row));
  }
  return {};
}

// Maps MySQL's --ssl-mode onto libmariadb's options. libmariadb has no
// mode option: MYSQL_OPT_SSL_ENFORCE asks for TLS but (in Connector/C 3.3)
// still connects unencrypted to a server without it, and a CA file makes the
// TLS handshake verify the server's chain; MYSQL_OPT_SSL_VERIFY_SERVER_CERT
// adds the host-name check (and refuses a server without TLS). So
// preferred = ENFORCE alone, verify-ca = ENFORCE + CA, verify-identity =
// ENFORCE + CA + VERIFY_SERVER_CERT, and "TLS or nothing" (required and the
// verify modes) is checked after the connect by RequireTls. disabled turns
// both off explicitly: later Connector/C versions default to TLS.
void ApplyTls(MYSQL* conn, const ClientTlsOptions& tls) {
  my_bool on = 1, off = 0;
  const bool use = tls.mode != TlsMode::kDisabled;
  const bool verify_host = tls.mode == TlsMode::kVerifyIdentity;
  if (use) {
    // With a CA the handshake verifies the chain; preferred and required do
    // not check the certificate, whatever file is configured.
    const bool verify_chain = tls.mode == TlsMode::kVerifyCa || verify_host;
    if (verify_chain && !tls.ca_file.empty()) {
      mysql_options(conn, MYSQL_OPT_SSL_CA, tls.ca_file.c_str());
    }
    if (!tls.cert_file.empty()) mysql_options(conn, MYSQL_OPT_SSL_CERT, tls.cert_file.c_str());
    if (!tls.key_file.empty()) mysql_options(conn, MYSQL_OPT_SSL_KEY, tls.key_file.c_str());
  }
  mysql_options(conn, MYSQL_OPT_SSL_ENFORCE, use ? &on : &off);
  mysql_options(conn, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, verify_host ? &on : &off);
}

// required and the verify modes: an unencrypted connection is an error
// (libmariadb may have fallen back to one).
Error RequireTls(MYSQL* conn, const ClientTlsOptions& tls) {
  if (tls.mode == TlsMode::kDisabled || tls.mode == TlsMode::kPreferred) return {};
  if (mysql_get_ssl_cipher(conn) != nullptr) return {};
  return {kClientSslConnectionError, "HY000",
          std::string("TLS is required (ssl-mode ") + TlsModeName(tls.mode) +
              ") but the server does not offer it"};
}

}  // namespace

StatusOr<Url> ParseUrl(std::string_view url) {
  Url out;
  std::string_view rest = url;
  for (std::string_view scheme : {"mysql://", "mariadb://"}) {
    if (rest.substr(0, scheme.size()) == scheme) rest.remove_prefix(scheme.size());
  }
  if (rest.size() == url.size()) {
    return InvalidArgument("a MySQL URL must start with mysql:// or mariadb://");
  }
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    EC_RETURN_IF_ERROR(ParseOptions(rest.substr(q + 1), &out));
    rest = rest.substr(0, q);
  }
  // The user info ends at the last @ before the path: a password may hold a
  // raw '/' or '@' that its writer did not escape.
  size_t at = rest.rfind('@');
  size_t slash = rest.find('/', at == std::string_view::npos ? 0 : at);
  if (slash != std::string_view::npos) {
    out.database = PercentDecode(rest.substr(slash + 1));
    rest = rest.substr(0, slash);
  }
  if (at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    size_t colon = userinfo.find(':');
    out.user = PercentDecode(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) out.password = PercentDecode(userinfo.substr(colon + 1));
    rest = rest.substr(at + 1);
  }
  EC_RETURN_IF_ERROR(ParseHostPort(rest, &out));
  return out;
}

std::string Error::ToString() const {
  return "[" + std::to_string(code) + (sqlstate.empty() ? "" : "/" + sqlstate) + "] " + message;
}

Error ErrorOf(MYSQL* conn) {
  const char* state = mysql_sqlstate(conn);
  return {mysql_errno(conn), state ? state : "", mysql_error(conn)};
}

Error ErrorOf(MYSQL_STMT* stmt) {
  const char* state = mysql_stmt_sqlstate(stmt);
  return {mysql_stmt_errno(stmt), state ? state : "", mysql_stmt_error(stmt)};
}

std::pair<ConnPtr, Error> Connect(const Url& url, const ConnectOptions& options) {
  // mysql_library_init is not thread-safe; later mysql_init calls are.
  static std::once_flag init;
  std::call_once(init, [] { mysql_library_init(0, nullptr, nullptr); });
  ConnPtr conn(mysql_init(nullptr));
  if (!conn) return {nullptr, Error{2008, "HY000", "MySQL client ran out of memory"}};
  my_bool no = 0;
  mysql_options(conn.get(), MYSQL_OPT_RECONNECT, &no);
  mysql_options(conn.get(), MYSQL_OPT_CONNECT_TIMEOUT, &options.connect_timeout_seconds);
  if (options.read_timeout_seconds > 0) {
    mysql_options(conn.get(), MYSQL_OPT_READ_TIMEOUT, &options.read_timeout_seconds);
  }
  if (options.write_timeout_seconds > 0) {
    mysql_options(conn.get(), MYSQL_OPT_WRITE_TIMEOUT, &options.write_timeout_seconds);
  }
  mysql_options(conn.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  ApplyTls(conn.get(), options.tls);
  if (!mysql_real_connect(conn.get(), url.host.c_str(), url.user.c_str(), url.password.c_str(),
                          url.database.empty() ? nullptr : url.database.c_str(), url.port, nullptr,
                          options.client_flags)) {
    return {nullptr, ErrorOf(conn.get())};
  }
  if (Error e = RequireTls(conn.get(), options.tls); e.failed()) return {nullptr, e};
  return {std::move(conn), Error{}};
}

bool IsMariaDb(MYSQL* conn) {
  const char* info = mysql_get_server_info(conn);
  return info != nullptr && std::strstr(info, "MariaDB") != nullptr;
}

std::string TlsCipher(MYSQL* conn) {
  const char* cipher = mysql_get_ssl_cipher(conn);
  return cipher != nullptr ? cipher : "";
}

std::pair<StmtPtr, Error> Prepare(MYSQL* conn, std::string_view sql) {
  StmtPtr stmt(mysql_stmt_init(conn));
  if (!stmt) return {nullptr, ErrorOf(conn)};
  if (mysql_stmt_prepare(stmt.get(), sql.data(), sql.size())) {
    return {nullptr, ErrorOf(stmt.get())};
  }
  return {std::move(stmt), Error{}};
}

Error Execute(MYSQL_STMT* stmt, const std::vector<Param>& params, Answer* answer) {
  *answer = Answer();
  if (mysql_stmt_param_count(stmt) != params.size()) {
    return {kClientInvalidParameterNo, "HY000",
            std::to_string(params.size()) + " parameters for " +
                std::to_string(mysql_stmt_param_count(stmt)) + " placeholders"};
  }
  ParamBuffers buffers(params.size());
  for (size_t i = 0; i < params.size(); ++i) BindParam(params[i], i, &buffers);
  if (!params.empty() && mysql_stmt_bind_param(stmt, buffers.binds.data())) return ErrorOf(stmt);
  if (mysql_stmt_execute(stmt)) return ErrorOf(stmt);
  ResultPtr meta(mysql_stmt_result_metadata(stmt));
  if (!meta) {
    if (mysql_stmt_errno(stmt) != 0) return ErrorOf(stmt);
    answer->affected_rows = mysql_stmt_affected_rows(stmt);
    return {};
  }
  answer->has_result_set = true;
  Error e = FetchAll(stmt, meta.get(), answer);
  // Frees the buffered rows so the statement can run again.
  mysql_stmt_free_result(stmt);
  return e;
}

Error Query(MYSQL* conn, std::string_view sql, Answer* answer) {
  *answer = Answer();
  if (mysql_real_query(conn, sql.data(), sql.size())) return ErrorOf(conn);
  ResultPtr result(mysql_store_result(conn));
  if (!result) {
    if (mysql_field_count(conn) != 0) return ErrorOf(conn);  // rows expected, none read
    answer->affected_rows = mysql_affected_rows(conn);
    return {};
  }
  answer->has_result_set = true;
  const unsigned n = mysql_num_fields(result.get());
  const MYSQL_FIELD* fields = mysql_fetch_fields(result.get());
  for (unsigned c = 0; c < n; ++c) {
    answer->columns.emplace_back(fields[c].name);
    answer->types.push_back(fields[c].type);
  }
  while (MYSQL_ROW row = mysql_fetch_row(result.get())) {
    const unsigned long* lengths = mysql_fetch_lengths(result.get());
    std::vector<std::optional<std::string>> cells(n);
    for (unsigned c = 0; c < n; ++c) {
      if (row[c] != nullptr) cells[c] = std::string(row[c], lengths[c]);
    }
    answer->rows.push_back(std::move(cells));
  }
  if (mysql_errno(conn) != 0) return ErrorOf(conn);
  return {};
}

}  // namespace export_center::mysql
