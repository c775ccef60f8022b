#pragma once
// One answer of a business service as read off the wire, for the callers
// that answer calls in place of the network: the fuzzers of both data routes
// (tests/source/fuzz/) hand a ServiceAnswerFn to NewProviderBatchSourceForTest
// and NewSqlContractClientForTest.

#include <functional>
#include <string>

namespace export_center::source {

struct ServiceAnswer {
  int status = 200;
  std::string body;
};

// Answers the POST of `body` to `path` (its query included).
using ServiceAnswerFn =
    std::function<ServiceAnswer(const std::string& path, const std::string& body)>;

}  // namespace export_center::source
