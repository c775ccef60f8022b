#pragma once
// Who is calling, as a verified token says (docs/http-api.md#authentication).
//
// The identity room (src/identity/) answers "who is this?" — the principal,
// and the token verification, key sources and claim mapping that produce it.
// What a principal may do with a task is a use case's rule, not identity's.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "task/task.h"

namespace export_center::identity {

struct Principal {
  std::string user;    // sub
  std::string tenant;  // tenant_id
  task::AppCode app = task::AppCode::kPlatform;
  std::vector<std::string> perms;
  // Unix ms from which the token no longer verifies (exp + leeway); 0 for a
  // principal that came with no expiry. Live event streams end there.
  int64_t valid_until_ms = 0;

  bool HasPerm(std::string_view perm) const;
};

}  // namespace export_center::identity
