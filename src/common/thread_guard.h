#pragma once
// The thread guard: every thread the center starts runs its body through it,
// so that no exception ever leaves a thread (docs/conventions.md#threads).
// An exception that reaches the guard — a std::exception or anything else —
// is logged with the thread's name, counted in a process-wide table
// (ThreadFailureCounts, exported as export_thread_failures_total{thread},
// docs/observability.md), and then:
//
// - a long-lived loop (consumer, publishers, reconciler, SSE poller, ...)
//   is started again after a short back-off (RunGuardedLoop,
//   StartGuardedThread), so a loop that keeps throwing does not spin;
// - one unit of an attempt's work (a prefetched page, a read-ahead page
//   statement, the second half of an enrich lookup, an S3 part upload, a
//   preview, the attempt itself) ends with Internal("<what>") instead
//   (RunGuardedOnce), which the attempt handles like any other failure
//   (docs/task-lifecycle.md#failure-classes): never std::terminate, never a
//   task left RUNNING until lease recovery.
//
// A failpoint "thread.<name>" (common/failpoint.h) makes the guard throw once
// inside the named body, for tests. Thread names are at most 15 bytes (the
// kernel's limit for pthread_setname_np, shown by `top -H` and in the log).
// Every function here is thread-safe.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status.h"

namespace export_center {

// Runs `body` until it returns normally. Each time it throws: log, count,
// wait (100 ms, doubling per failure in a row up to 1 s; a body that ran at
// least 10 s before throwing starts again at 100 ms), and run it again.
void RunGuardedLoop(std::string_view name, const std::function<void()>& body);

// Starts a thread named `name` running RunGuardedLoop(name, body).
std::thread StartGuardedThread(std::string name, std::function<void()> body);

// Starts a thread named `name` for an attempt's worker: `body` is its wait
// loop, and each unit of work inside it goes through RunGuardedOnce(name,
// ...), which owns the failpoint. The thread itself still runs under the loop
// guard, without the failpoint, as a last resort.
std::thread StartWorkerThread(std::string name, std::function<void()> body);

// Logs and counts an exception caught by the guard of `name` and returns
// Internal("thread <name>: uncaught exception: <what>"). Used by
// RunGuardedOnce.
Status ReportThreadFailure(std::string_view name, std::exception_ptr error);

// Registers `name` in the failure table (at 0) and throws if its failpoint
// "thread.<name>" fires. Used by RunGuardedOnce.
void EnterThreadGuard(std::string_view name);

// Runs `body` (returning Status or StatusOr<T>); an exception becomes the
// Status of ReportThreadFailure.
template <typename F>
auto RunGuardedOnce(std::string_view name, F&& body) -> std::invoke_result_t<F> {
  try {
    EnterThreadGuard(name);
    return std::forward<F>(body)();
  } catch (...) {
    return ReportThreadFailure(name, std::current_exception());
  }
}

// Failures caught per thread name since start, every name whose guard has
// run (0 when it never failed), sorted by name.
std::vector<std::pair<std::string, int64_t>> ThreadFailureCounts();

// Names the calling thread (cut to 15 bytes). Best effort.
void SetCurrentThreadName(std::string_view name);

// The stack every thread the center starts gets at least: 8 MiB, glibc's
// default under Debian's `ulimit -s` of 8192. The nesting bound on outside
// data (common/nesting.h) keeps every recursive walk to some tens of KiB of
// it (docs/fuzzing.md#nesting).
inline constexpr size_t kMinThreadStackBytes = size_t{8} << 20;

// Raises the default stack of threads created from now on (std::thread,
// Beast's and every library's) to at least `bytes`, whatever stack limit the
// process inherited (glibc sizes new threads by RLIMIT_STACK, 2 MiB when it
// is unlimited, and `ulimit -s 256` would give 256 KiB). Never lowers it.
// Call once at start, before any thread exists. Best effort: false when
// glibc refused.
bool RaiseDefaultThreadStack(size_t bytes = kMinThreadStackBytes);

}  // namespace export_center
