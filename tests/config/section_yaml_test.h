#pragma once
// What the tests of one config section share (mail_yaml_test,
// notifications_yaml_test): the smallest valid file around the section, and
// the check that a wrong section gets an error line naming its key.

#include <gtest/gtest.h>

#include <string>

#include "config/config.h"

namespace export_center::config::section_test {

// Auth (which every config needs) and one export type for filters to name.
inline constexpr char kBase[] = R"(
auth:
  jwt-hs256-secret: test-secret-0123456789abcdef0123456789
  download-url-secret: test-download-0123456789abcdef0123456789
  jwt-issuer: test-issuer
  jwt-audience: export-center
definitions:
  ORDERS: {}
)";

inline StatusOr<AppConfig> Parse(const std::string& section) {
  return ParseConfig(std::string(kBase) + section, "test.yaml");
}

// `section` is refused with `line` among the error's lines.
inline void ExpectProblem(const std::string& section, const std::string& line) {
  StatusOr<AppConfig> result = Parse(section);
  ASSERT_FALSE(result.ok()) << "expected: " << line;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("\n" + line), std::string::npos)
      << "expected line: " << line << "\ngot:\n"
      << result.status().message();
}

}  // namespace export_center::config::section_test
