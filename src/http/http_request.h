#pragma once
// HttpRequest: one complete HTTP/1.1 request as the API's handlers see it,
// with no trace of the server library that parsed it (docs/http-serving.md).
//
// The server fills it on an I/O thread and hands it to one worker thread; it
// is a plain value, not shared between threads.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace export_center::http {

// Header fields in arrival order; names compare case-insensitively.
class HeaderMap {
 public:
  using Field = std::pair<std::string, std::string>;

  void Add(std::string name, std::string value);
  // Replaces every field called `name` by one.
  void Set(std::string name, std::string value);
  bool Has(std::string_view name) const;
  // The first value of `name`, or "" when there is none.
  const std::string& Get(std::string_view name) const;
  const std::vector<Field>& fields() const { return fields_; }

 private:
  std::vector<Field> fields_;
};

struct HttpRequest {
  std::string method;                             // as sent: "GET", "POST", ...
  std::string target;                             // the raw request-target, query included
  std::string path;                               // percent-decoded path of the target
  std::multimap<std::string, std::string> query;  // decoded, '+' as space
  HeaderMap headers;
  std::string body;
  std::string peer_address;  // the client's IP address
  // The "{name}" segments of the matched route, in order (set by Router).
  std::vector<std::string> path_params;

  const std::string& Header(std::string_view name) const { return headers.Get(name); }
  bool HasQuery(const std::string& name) const { return query.count(name) > 0; }
  // The first value of query parameter `name`, or "".
  std::string Query(const std::string& name) const;
  // The i-th path parameter, or "" when the route has fewer.
  const std::string& PathParam(size_t i) const;
};

// Splits a request-target into its decoded path and query parameters.
// Malformed %-escapes are kept literally, as lenient servers do.
void ParseTarget(std::string_view target, std::string* path,
                 std::multimap<std::string, std::string>* query);

// Decodes %XX escapes; `plus_as_space` for query strings.
std::string PercentDecode(std::string_view text, bool plus_as_space);

}  // namespace export_center::http
