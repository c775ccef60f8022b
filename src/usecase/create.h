#pragma once
// The create use case: a new task from a checked CreateRequest, as `owner`
// (docs/http-api.md#post-export-tasks--create). POST /export-tasks, export
// again and a subscription's run all create through CreateTask, so every
// task gets the same checks, limits, dedupe, contract version and file key.
//
// Thread-safe: CreateTask may run on many threads at once; the file-key
// derivations among them are bounded by a KeyDerivationGate.

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "common/file_key_ring.h"
#include "common/status.h"
#include "identity/principal.h"
#include "store/task_catalog.h"
#include "task/limits.h"
#include "task/task.h"
#include "usecase/create_request.h"
#include "usecase/source_routes.h"

namespace export_center::usecase {

// The message of the Unavailable CreateTask answers when every slot of the
// key derivation is taken; the API answers it 503 with Retry-After.
inline constexpr char kKeyDerivationBusy[] =
    "too many password-protected exports are being prepared; please retry shortly";
// Seconds a refused caller is told to wait.
inline constexpr int kKeyDerivationRetryAfterSeconds = 2;

// At most `capacity` holders at once; TryEnter never waits. The file-key
// derivation costs 0.6–1.2 s of CPU by design, so without a bound a burst of
// password-protected creates takes every HTTP worker.
class KeyDerivationGate {
 public:
  explicit KeyDerivationGate(int capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  KeyDerivationGate(const KeyDerivationGate&) = delete;
  KeyDerivationGate& operator=(const KeyDerivationGate&) = delete;

  // Takes a slot if one is free.
  bool TryEnter();
  // Gives back a slot TryEnter took.
  void Leave();
  int capacity() const { return capacity_; }
  int in_use() const { return in_use_.load(); }

 private:
  const int capacity_;
  std::atomic<int> in_use_{0};
};

// The default: two derivations at once, the rest answered 503.
inline constexpr int kDefaultKeyDerivations = 2;

struct CreateDeps {
  store::TaskCatalog* store = nullptr;  // not owned
  task::LimitsOptions limits{};
  // The contract version at create (SourceRoutes::ContractVersionAtCreate).
  // Optional: unset, no version is recorded.
  SourceRoutes* routes = nullptr;
  // Derives the file key material from a checked filePassword and wraps it
  // under the current key-encryption key (app/ joins
  // render::DeriveFileKeyMaterial and FileKeyRing::Wrap). Unset, a create
  // with a filePassword fails Internal.
  std::function<StatusOr<WrappedFileKey>(std::string_view password)> seal_file_password{};
  // Bounds the seal's derivations; null: unbounded.
  KeyDerivationGate* key_derivations = nullptr;
  // Called once per newly created (not deduplicated) task with its type.
  // Optional.
  std::function<void(const std::string& type)> on_created{};
};

struct CreateResult {
  task::Task task{};
  bool deduplicated = false;  // an active task with the same request was returned
};

// Creates the task `request` describes, owned by `owner` (tenant, app, user).
// `request` was checked for `owner` (CheckCreateBody); `trace_id` becomes the
// first command's trace id. InvalidArgument for a missing filePassword the
// type or a governed column requires; Unavailable(kKeyDerivationBusy) when
// the key derivation is full; LimitExceeded over the active limits; store
// errors with context.
StatusOr<CreateResult> CreateTask(const CreateDeps& deps, const Principal& owner,
                                  const CreateRequest& request, const std::string& trace_id);

// Whether `status` is CreateTask's "key derivation full" answer.
bool IsKeyDerivationBusy(const Status& status);

}  // namespace export_center::usecase
