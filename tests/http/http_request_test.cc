#include "http/http_request.h"

#include <gtest/gtest.h>

namespace export_center::http {
namespace {

TEST(HttpRequest, ParseTargetDecodesPathAndQuery) {
  std::string path;
  std::multimap<std::string, std::string> query;
  ParseTarget("/a%20b/c+d?x=1&y=a+b%26c&flag&x=2&=v&#frag", &path, &query);
  EXPECT_EQ(path, "/a b/c+d");  // '+' is only a space in the query
  EXPECT_EQ(query.count("x"), 2u);
  EXPECT_EQ(query.find("x")->second, "1");
  EXPECT_EQ(query.find("y")->second, "a b&c");
  EXPECT_EQ(query.find("flag")->second, "");
  EXPECT_EQ(query.find("")->second, "v");
}

TEST(HttpRequest, MalformedEscapesStayLiteral) {
  EXPECT_EQ(PercentDecode("%zz%4", false), "%zz%4");
  EXPECT_EQ(PercentDecode("%41%6a", false), "Aj");
}

TEST(HttpRequest, HeadersIgnoreCase) {
  HttpRequest req;
  req.headers.Add("Content-Type", "application/json");
  req.headers.Add("X-Twice", "1");
  req.headers.Add("x-twice", "2");
  EXPECT_EQ(req.Header("content-type"), "application/json");
  EXPECT_EQ(req.Header("X-TWICE"), "1");
  EXPECT_EQ(req.Header("Missing"), "");
  req.headers.Set("X-Twice", "3");
  EXPECT_EQ(req.headers.fields().size(), 2u);
  EXPECT_EQ(req.Header("x-twice"), "3");
  EXPECT_EQ(req.PathParam(0), "");
}

}  // namespace
}  // namespace export_center::http
