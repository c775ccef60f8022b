#pragma once
// Process plumbing shared by the throwaway test servers (PostgreSQL, MariaDB).

#include <sys/types.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/status.h"

namespace export_center::testing {

// Whether a missing real server must fail a test instead of skipping it: in CI
// (CI=true) the test script installs every server, so a skip would hide a
// broken install. Locally a developer without the packages may skip.
inline bool RealServersRequired() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && *ci != '\0' && std::string(ci) != "false";
}

// Who a spawned server runs as (PostgreSQL refuses to run as root).
struct RunAs {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

// fork + exec `argv` (argv[0] an absolute path) as `who`, in its own process
// group, stdin from /dev/null, stdout/stderr appended to `log`.
StatusOr<pid_t> SpawnLogged(const std::vector<std::string>& argv, const std::string& log,
                            const RunAs& who = {});

// A loopback TCP port that was free a moment ago (bind to port 0).
StatusOr<int> FreeLoopbackPort();

// The last `bytes` of a log file, for start-up error messages.
std::string TailOfFile(const std::string& path, size_t bytes = 2000);

// Sends `signal`, waits up to 15 s for the process to exit, then SIGKILLs it.
// Always reaps: no zombie, and the pid is never signalled again.
void StopAndReap(pid_t pid, int signal);

}  // namespace export_center::testing
