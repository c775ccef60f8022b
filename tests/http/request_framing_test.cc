// The framing rules on their own; tests/http/beast/beast_http_server_hostile_test.cc
// runs them on the real server.
#include "http/request_framing.h"

#include <gtest/gtest.h>

#include <string>

namespace export_center::http {
namespace {

using Verdict = HeaderScanner::Verdict;

Verdict ScanAll(const std::string& bytes, int max_fields = kMaxHeaderFields) {
  HeaderScanner scanner(max_fields);
  size_t used = 0;
  return scanner.Scan(bytes, &used);
}

TEST(HeaderScanner, FindsTheEndAndStopsThere) {
  HeaderScanner scanner;
  size_t used = 0;
  EXPECT_EQ(scanner.Scan("GET / HTTP/1.1\r\nHost: t\r", &used), Verdict::kMore);
  EXPECT_EQ(used, 24u);
  EXPECT_EQ(scanner.Scan("\n\r\n body \r\n folded", &used), Verdict::kEnd);
  EXPECT_EQ(used, 2u);  // the body after the empty line is not looked at
  EXPECT_EQ(scanner.Scan(" more", &used), Verdict::kEnd);
}

TEST(HeaderScanner, RefusesFoldedLinesAndTooManyFields) {
  EXPECT_EQ(ScanAll("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"), Verdict::kFolded);
  EXPECT_EQ(ScanAll("GET / HTTP/1.1\r\n\tA: b\r\n\r\n"), Verdict::kFolded);
  EXPECT_EQ(ScanAll("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n", 2), Verdict::kEnd);
  EXPECT_EQ(ScanAll("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 2), Verdict::kTooManyFields);
}

HttpRequest Request(const std::string& target, std::string method = "GET") {
  HttpRequest r;
  r.method = std::move(method);
  r.target = target;
  ParseTarget(target, &r.path, &r.query);
  r.headers.Add("Host", "proxy.example");
  return r;
}

TEST(NormalizeTarget, AbsoluteFormBecomesOriginFormWithItsHost) {
  HttpRequest r = Request("http://api.example:8080/a%20b?q=1");
  ASSERT_TRUE(NormalizeTarget(&r));
  EXPECT_EQ(r.target, "/a%20b?q=1");
  EXPECT_EQ(r.path, "/a b");
  EXPECT_EQ(r.Query("q"), "1");
  EXPECT_EQ(r.Header("Host"), "api.example:8080");
  EXPECT_EQ(r.headers.fields().size(), 1u);  // replaced, not added
  HttpRequest bare = Request("HTTPS://api.example");
  ASSERT_TRUE(NormalizeTarget(&bare));
  EXPECT_EQ(bare.target, "/");
}

TEST(NormalizeTarget, RefusesOtherForms) {
  for (const char* target :
       {"ftp://h/x", "http:///x", "http://u@h/x", "http://h h/x", "h:443", "x", "", "*"}) {
    HttpRequest r = Request(target);
    EXPECT_FALSE(NormalizeTarget(&r)) << target;
  }
  HttpRequest options = Request("*", "OPTIONS");
  EXPECT_TRUE(NormalizeTarget(&options));
}

TEST(FramingRefusal, TransferEncodingMustBeChunkedAlone) {
  auto with = [](std::initializer_list<std::pair<const char*, const char*>> fields) {
    HttpRequest r;
    r.headers.Add("Host", "t");
    for (const auto& [name, value] : fields) r.headers.Add(name, value);
    return r;
  };
  EXPECT_EQ(FramingRefusal(with({{"Transfer-Encoding", "chunked"}}), 11, true), 0);
  EXPECT_EQ(FramingRefusal(with({{"Transfer-Encoding", "chunked"}}), 11, false), 400);
  EXPECT_EQ(FramingRefusal(with({{"Transfer-Encoding", "chunked"}}), 10, true), 400);
  EXPECT_EQ(FramingRefusal(with({{"Transfer-Encoding", "gzip"}}), 11, false), 400);
  EXPECT_EQ(FramingRefusal(with({{"Transfer-Encoding", "gzip, chunked"}}), 11, true), 400);
  EXPECT_EQ(
      FramingRefusal(with({{"Transfer-Encoding", "chunked"}, {"Content-Length", "3"}}), 11, true),
      400);
  EXPECT_EQ(FramingRefusal(with({{"Content-Length", "3"}}), 11, false), 0);
  EXPECT_EQ(FramingRefusal(HttpRequest(), 11, false), 400);  // no Host
  EXPECT_EQ(FramingRefusal(HttpRequest(), 10, false), 0);
}

TEST(ChunkExtensions, OnlyVisibleCharactersSpaceAndTab) {
  EXPECT_TRUE(ChunkExtensionsAreClean(";a=\"x y\"\t;b"));
  EXPECT_FALSE(ChunkExtensionsAreClean(";a=\"x\ny\""));
  EXPECT_FALSE(ChunkExtensionsAreClean(std::string(";a=\0", 4)));
  EXPECT_FALSE(ChunkExtensionsAreClean(";a=\x7f"));
}

}  // namespace
}  // namespace export_center::http
