#pragma once
// What this binary is: the release it was built as and the commit its sources were at.
//
// The version is CMakeLists.txt's project VERSION (semantic versioning; CHANGELOG.md
// says what each release changed, RELEASES names each release's commit). Both are
// written into a generated source of their own (cmake/BuildInfo.cmake, target
// ec_build_info), so a new commit recompiles one file, not every user of this header.
// `export-center --version`, GET /healthz, the export_center_build_info metric and
// `export-center check` show them.

#include <string>
#include <string_view>

namespace export_center::build_info {

// "MAJOR.MINOR.PATCH", e.g. "1.0.0".
std::string_view Version();
// The abbreviated commit hash, or "unknown" when the build's sources were not a git
// checkout (a release tarball, `git archive`).
std::string_view Commit();

// "1.0.0 (commit 0123456789ab)": the form every human-readable output uses.
inline std::string Describe() {
  return std::string(Version()) + " (commit " + std::string(Commit()) + ")";
}

}  // namespace export_center::build_info
