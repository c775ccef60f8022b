#pragma once
// The caller as api/ names it: the principal a verified token yields
// (identity/principal.h; token verification: identity/token_verifier.h).
// What a principal may do with a task or a type is a use case's rule
// (usecase/access.h).

#include "identity/principal.h"

namespace export_center::api {

using identity::Principal;

}  // namespace export_center::api
