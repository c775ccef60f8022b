// libFuzzer target for everything the S3 client reads from a server's answer
// body (s3/s3_client.h "reading S3's answers"): the XML of ListObjectsV2,
// CreateMultipartUpload, CompleteMultipartUpload (an <Error> inside a 200),
// ListMultipartUploads and error answers, and the S3 timestamps in them.
// Every input is tried as each answer, and as an error body under a status
// taken from its first byte. Nothing may crash or leak; errors are fine, and
// an error answer never becomes OK.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "s3/s3_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace s3 = export_center::s3;
  const std::string body(reinterpret_cast<const char*>(data), size);
  (void)s3::ParseListObjectsAnswer("LIST exports/", body);
  (void)s3::ParseCreateMultipartUploadAnswer("CreateMultipartUpload k", body);
  (void)s3::ParseCompleteMultipartUploadAnswer("CompleteMultipartUpload k", body);
  (void)s3::ParseListMultipartUploadsAnswer("ListMultipartUploads exports/", body);
  const int status = size == 0 ? 500 : 300 + data[0] % 300;
  if (s3::S3Error("GET k", status, body).ok()) std::abort();
  (void)s3::ParseS3Time(body);
  return 0;
}
