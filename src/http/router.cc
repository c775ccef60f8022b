#include "http/router.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace export_center::http {
namespace {

// "/a/b/" → {"a", "b", ""}: a trailing slash is a different path, as before.
std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path[0] != '/') return out;
  path.remove_prefix(1);
  while (true) {
    size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

}  // namespace

void Router::Add(std::string method, std::string_view pattern, Handler handler) {
  Route route{std::move(method), {}, std::move(handler)};
  for (std::string_view seg : Split(pattern)) {
    bool param = seg.size() >= 2 && seg.front() == '{' && seg.back() == '}';
    route.segments.emplace_back(param ? std::string("{}") : std::string(seg));
  }
  routes_.push_back(std::move(route));
}

bool Router::MatchPath(const Route& route, const std::vector<std::string_view>& path,
                       std::vector<std::string>* params) {
  if (route.segments.size() != path.size()) return false;
  params->clear();
  for (size_t i = 0; i < path.size(); ++i) {
    if (route.segments[i] == "{}") {
      if (path[i].empty()) return false;
      params->emplace_back(path[i]);
    } else if (route.segments[i] != path[i]) {
      return false;
    }
  }
  return true;
}

Router::Match Router::Find(std::string_view method, std::string_view path) const {
  Match m;
  std::vector<std::string_view> segments = Split(path);
  if (segments.empty()) return m;
  std::string_view want = method == "HEAD" ? "GET" : method;
  // A literal segment beats a parameter: "/tasks/events-ticket" is that
  // route's path for every method (405 for the others), never "/tasks/{id}".
  // So only the routes matching with the fewest parameters count.
  std::vector<std::string> params;
  size_t fewest = SIZE_MAX;
  for (const Route& r : routes_) {
    if (MatchPath(r, segments, &params)) fewest = std::min(fewest, params.size());
  }
  for (const Route& r : routes_) {
    if (!MatchPath(r, segments, &params) || params.size() != fewest) continue;
    if (r.method == want) {
      m.handler = &r.handler;
      m.params = std::move(params);
      m.allowed.clear();
      return m;
    }
    if (std::find(m.allowed.begin(), m.allowed.end(), r.method) == m.allowed.end()) {
      m.allowed.push_back(r.method);
    }
  }
  if (std::find(m.allowed.begin(), m.allowed.end(), "GET") != m.allowed.end()) {
    m.allowed.push_back("HEAD");
  }
  return m;
}

}  // namespace export_center::http
