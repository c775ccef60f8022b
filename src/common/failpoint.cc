#include "common/failpoint.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "common/mutex.h"

namespace export_center {
namespace {

// Hand-written: a comma list and a map are all the mechanism needs, and
// fail-rs/gofail have no C++ counterpart in the build.
class Failpoints {
 public:
  Failpoints() {
    const char* env = std::getenv(kFailpointsEnv);
    Set(env == nullptr ? std::string_view() : std::string_view(env));
  }

  void Set(std::string_view list) {
    MutexLock lock(&mu_);
    armed_.clear();
    while (!list.empty()) {
      const size_t comma = list.find(',');
      std::string_view name = list.substr(0, comma);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      if (!name.empty()) armed_[std::string(name)] = true;
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
    any_.store(!armed_.empty(), std::memory_order_relaxed);
  }

  bool Any() const { return any_.load(std::memory_order_relaxed); }

  bool Fires(std::string_view name) {
    if (!Any()) return false;
    MutexLock lock(&mu_);
    auto it = armed_.find(name);
    if (it == armed_.end() || !it->second) return false;
    it->second = false;
    return true;
  }

 private:
  std::atomic<bool> any_{false};
  Mutex mu_;
  std::map<std::string, bool, std::less<>> armed_ GUARDED_BY(mu_);  // name -> not fired yet
};

Failpoints& Instance() {
  static Failpoints* instance = new Failpoints();  // never destroyed: threads may outlive main
  return *instance;
}

}  // namespace

bool FailpointFires(std::string_view name) { return Instance().Fires(name); }

bool AnyFailpointArmed() { return Instance().Any(); }

void SetFailpointsForTest(std::string_view list) { Instance().Set(list); }

}  // namespace export_center
