// Issue 43: S3's XML answers, nested a million deep. pugixml parses and frees
// without recursion and the client reads fixed paths only, but every tree the
// center builds from outside bytes is refused past kMaxNesting
// (common/nesting.h), so no later walk of one can recurse deeper.
#include <gtest/gtest.h>

#include <string>

#include "s3/s3_client.h"

namespace export_center::s3 {
namespace {

std::string Deep(const std::string& outer, int depth) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><" + outer + ">";
  xml.reserve(depth * 7 + 100);
  for (int i = 0; i < depth; ++i) xml += "<a>";
  for (int i = 0; i < depth; ++i) xml += "</a>";
  return xml + "</" + outer + ">";
}

TEST(S3Xml, AnswersNestedAMillionDeepAreRefusedClearly) {
  constexpr int kMillion = 1000000;
  auto list = ParseListObjectsAnswer("LIST exports/", Deep("ListBucketResult", kMillion));
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().message(), "s3 LIST exports/: XML answer nested deeper than 64 levels");
  EXPECT_FALSE(
      ParseCreateMultipartUploadAnswer("CREATE x", Deep("InitiateMultipartUploadResult", kMillion))
          .ok());
  // CompleteMultipartUpload's 200 is judged by an <Error> it may hold: a body
  // that is not readable (malformed, or too deep) holds none, as before.
  EXPECT_TRUE(ParseCompleteMultipartUploadAnswer("COMPLETE x",
                                                 Deep("CompleteMultipartUploadResult", kMillion))
                  .ok());
  EXPECT_FALSE(
      ParseListMultipartUploadsAnswer("UPLOADS", Deep("ListMultipartUploadsResult", kMillion))
          .ok());
  // An error body that deep still maps its HTTP status, without its words.
  const Status error = S3Error("GET x", 503, Deep("Error", kMillion));
  EXPECT_EQ(error.code(), StatusCode::kUnavailable);
  EXPECT_EQ(error.message(), "s3 GET x: HTTP 503");
}

TEST(S3Xml, RealAnswersAreFarBelowTheBound) {
  auto list = ParseListObjectsAnswer(
      "LIST",
      "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a.xlsx</Key>"
      "<Size>5</Size></Contents></ListBucketResult>");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->objects.size(), 1u);
  EXPECT_EQ(list->objects[0].key, "a.xlsx");
}

}  // namespace
}  // namespace export_center::s3
