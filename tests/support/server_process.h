#pragma once
// Process plumbing shared by the throwaway test servers (PostgreSQL, MariaDB).

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace export_center::testing {

// A loopback TCP port that was free a moment ago (bind to port 0).
StatusOr<int> FreeLoopbackPort();

// The last `bytes` of a log file, for start-up error messages.
std::string TailOfFile(const std::string& path, size_t bytes = 2000);

// Sends `signal`, waits up to 15 s for the process to exit, then SIGKILLs it.
// Always reaps: no zombie, and the pid is never signalled again.
void StopAndReap(pid_t pid, int signal);

}  // namespace export_center::testing
