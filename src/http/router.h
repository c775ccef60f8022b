#pragma once
// Router: maps a method and a decoded path to a handler.
//
// Patterns are literal segments and "{name}" segments; a "{name}" segment
// matches one non-empty path segment and lands in HttpRequest::path_params.
// HEAD is answered by the GET route (the server drops the body). A route
// whose literal segments match where another has a parameter wins for every
// method: the path is its, and other methods get 405. When nothing
// matches, Find says whether the path exists under other methods, so the
// caller can tell 405 (with Allow) from 404.
//
// Thread-safety: Add before serving; Find is const and safe from any thread.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_request.h"
#include "http/http_response.h"

namespace export_center::http {

class Router {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse&)>;

  struct Match {
    const Handler* handler = nullptr;  // null: no route for this method
    std::vector<std::string> params;   // the {name} segments when matched
    // When handler is null: methods the path has (HEAD added beside GET);
    // empty means the path is unknown (404).
    std::vector<std::string> allowed;
  };

  void Add(std::string method, std::string_view pattern, Handler handler);
  Match Find(std::string_view method, std::string_view path) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;  // "{}" marks a parameter
    Handler handler;
  };
  static bool MatchPath(const Route& route, const std::vector<std::string_view>& path,
                        std::vector<std::string>* params);

  std::vector<Route> routes_;
};

}  // namespace export_center::http
