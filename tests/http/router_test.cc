#include "http/router.h"

#include <gtest/gtest.h>

namespace export_center::http {
namespace {

Router MakeRouter() {
  Router r;
  auto named = [](std::string name) {
    return [name](const HttpRequest&, HttpResponse& res) { res.body = name; };
  };
  r.Add("POST", "/files/tasks", named("create"));
  r.Add("GET", "/files/tasks", named("list"));
  r.Add("GET", "/files/tasks/{id}", named("get"));
  r.Add("POST", "/files/tasks/{id}/retry", named("retry"));
  r.Add("GET", "/", named("page"));
  return r;
}

std::string HandlerName(const Router::Match& m) {
  if (m.handler == nullptr) return "-";
  HttpResponse res;
  (*m.handler)(HttpRequest(), res);
  return res.body;
}

TEST(Router, MatchesLiteralAndParameterSegments) {
  Router r = MakeRouter();
  EXPECT_EQ(HandlerName(r.Find("GET", "/files/tasks")), "list");
  EXPECT_EQ(HandlerName(r.Find("POST", "/files/tasks")), "create");
  Router::Match m = r.Find("GET", "/files/tasks/42");
  EXPECT_EQ(HandlerName(m), "get");
  EXPECT_EQ(m.params, std::vector<std::string>{"42"});
  EXPECT_EQ(r.Find("POST", "/files/tasks/7/retry").params, std::vector<std::string>{"7"});
  EXPECT_EQ(HandlerName(r.Find("GET", "/")), "page");
}

TEST(Router, HeadUsesTheGetRoute) {
  Router r = MakeRouter();
  EXPECT_EQ(HandlerName(r.Find("HEAD", "/files/tasks/1")), "get");
}

TEST(Router, UnknownPathsAndWrongMethods) {
  Router r = MakeRouter();
  // A parameter never matches an empty segment, and trailing slashes differ.
  for (const char* path :
       {"/files/tasks//retry", "/files/tasks/", "/nope", "", "files/tasks", "/files/tasks/1/2"}) {
    Router::Match m = r.Find("GET", path);
    EXPECT_EQ(m.handler, nullptr) << path;
    EXPECT_TRUE(m.allowed.empty()) << path;
  }
  Router::Match del = r.Find("DELETE", "/files/tasks");
  EXPECT_EQ(del.handler, nullptr);
  EXPECT_EQ(del.allowed, (std::vector<std::string>{"POST", "GET", "HEAD"}));
  EXPECT_EQ(r.Find("GET", "/files/tasks/1/retry").allowed, std::vector<std::string>{"POST"});
}

// A literal path beside a parameter one (POST /tasks/events-ticket beside
// GET /tasks/{id}) is its own path: another method gets 405, not the
// parameter route with "events-ticket" as an id.
TEST(Router, ALiteralSegmentBeatsAParameterForEveryMethod) {
  Router r = MakeRouter();
  r.Add("POST", "/files/tasks/events-ticket",
        [](const HttpRequest&, HttpResponse& res) { res.body = "ticket"; });
  EXPECT_EQ(HandlerName(r.Find("POST", "/files/tasks/events-ticket")), "ticket");
  Router::Match get = r.Find("GET", "/files/tasks/events-ticket");
  EXPECT_EQ(get.handler, nullptr);
  EXPECT_EQ(get.allowed, std::vector<std::string>{"POST"});
  EXPECT_EQ(HandlerName(r.Find("GET", "/files/tasks/42")), "get");
}

}  // namespace
}  // namespace export_center::http
