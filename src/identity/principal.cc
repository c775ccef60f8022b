#include "identity/principal.h"

#include <algorithm>

namespace export_center::identity {

bool Principal::HasPerm(std::string_view perm) const {
  return std::find(perms.begin(), perms.end(), perm) != perms.end();
}

}  // namespace export_center::identity
