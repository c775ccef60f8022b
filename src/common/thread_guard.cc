#include "common/thread_guard.h"

#include <cxxabi.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <typeinfo>

#include "common/failpoint.h"
#include "common/mutex.h"
#include "common/utf8.h"

namespace export_center {
namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(100);
constexpr auto kMaxBackoff = std::chrono::seconds(1);
// A body that ran this long before it threw is not "failing in a row".
constexpr auto kHealthyRun = std::chrono::seconds(10);
constexpr size_t kMaxThreadName = 15;  // pthread_setname_np: 16 bytes with the NUL
// An exception's text may quote data: it becomes a failure message, so it is
// kept short and valid UTF-8 (invalid bytes become U+FFFD).
constexpr size_t kMaxWhatBytes = 400;

class FailureTable {
 public:
  // Runs at every guarded unit of work (a prefetched page, say): allocates
  // only the first time a name is seen.
  void Register(std::string_view name) {
    MutexLock lock(&mu_);
    if (counts_.find(name) == counts_.end()) counts_.emplace(std::string(name), 0);
  }
  void Count(std::string_view name) {
    MutexLock lock(&mu_);
    ++counts_[std::string(name)];
  }
  std::vector<std::pair<std::string, int64_t>> Snapshot() {
    MutexLock lock(&mu_);
    return {counts_.begin(), counts_.end()};
  }

 private:
  Mutex mu_;
  std::map<std::string, int64_t, std::less<>> counts_ GUARDED_BY(mu_);
};

FailureTable& Table() {
  static FailureTable* table = new FailureTable();  // never destroyed: threads may outlive main
  return *table;
}

std::string TypeName(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : type.name();
  std::free(demangled);
  return name;
}

std::string Describe(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const std::exception& e) {
    return utf8::Excerpt(e.what(), kMaxWhatBytes) + " (" + TypeName(typeid(e)) + ")";
  } catch (...) {
    return "an exception of a type that is not std::exception";
  }
}

std::string LogAndCount(std::string_view name, std::exception_ptr error, std::string_view then) {
  Table().Count(name);
  std::string what = Describe(std::move(error));
  // spdlog itself must not throw out of the guard.
  try {
    spdlog::error("thread {}: uncaught exception: {}; {}", name, what, then);
  } catch (...) {
  }
  return what;
}

void Enter(std::string_view name, bool failpoint) {
  Table().Register(name);
  if (failpoint && AnyFailpointArmed() &&
      FailpointFires(std::string("thread.") + std::string(name))) {
    throw std::runtime_error("failpoint thread." + std::string(name));
  }
}

void Loop(std::string_view name, const std::function<void()>& body, bool failpoint) {
  auto backoff = kFirstBackoff;
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    try {
      Enter(name, failpoint);
      body();
      return;
    } catch (...) {
      if (std::chrono::steady_clock::now() - started >= kHealthyRun) backoff = kFirstBackoff;
      LogAndCount(name, std::current_exception(),
                  "restarting in " + std::to_string(backoff.count()) + " ms");
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
  }
}

std::thread Start(std::string name, std::function<void()> body, bool failpoint) {
  return std::thread([name = std::move(name), body = std::move(body), failpoint] {
    SetCurrentThreadName(name);
    Loop(name, body, failpoint);
  });
}

}  // namespace

void RunGuardedLoop(std::string_view name, const std::function<void()>& body) {
  Loop(name, body, true);
}

std::thread StartGuardedThread(std::string name, std::function<void()> body) {
  return Start(std::move(name), std::move(body), true);
}

std::thread StartWorkerThread(std::string name, std::function<void()> body) {
  return Start(std::move(name), std::move(body), false);
}

Status ReportThreadFailure(std::string_view name, std::exception_ptr error) {
  std::string what = LogAndCount(name, std::move(error), "the work it ran fails");
  return Internal("thread " + std::string(name) + ": uncaught exception: " + what);
}

void EnterThreadGuard(std::string_view name) { Enter(name, true); }

std::vector<std::pair<std::string, int64_t>> ThreadFailureCounts() { return Table().Snapshot(); }

void SetCurrentThreadName(std::string_view name) {
  const std::string cut(name.substr(0, kMaxThreadName));
  pthread_setname_np(pthread_self(), cut.c_str());
}

bool RaiseDefaultThreadStack(size_t bytes) {
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return false;
  size_t size = 0;
  bool ok = pthread_attr_getstacksize(&attr, &size) == 0;
  if (ok && size < bytes) {
    ok = pthread_attr_setstacksize(&attr, bytes) == 0 && pthread_setattr_default_np(&attr) == 0;
  }
  pthread_attr_destroy(&attr);
  return ok;
}

}  // namespace export_center
