#pragma once
// The relative DATE parameters of a subscription
// (docs/subscriptions.md#relative-parameters): a DATE parameter may hold
// {"relative": "last-month", "bound": "start"} instead of a date; each run
// resolves it in the schedule's zone at its slot, so the task it creates has
// fixed dates. Pure functions, any thread.

#include <cctz/time_zone.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/status.h"
#include "registry/export_definition.h"

namespace export_center::usecase {

// The relative parameters of `params` (an object), checked against `def`
// and normalised ({"relative", "bound"}, bound "start" when not given), by
// name. InvalidArgument naming the field (`parameters.from: a relative date
// is only for DATE parameters`, an unknown range or bound).
StatusOr<nlohmann::json> ReadRelativeParameters(const nlohmann::json& params,
                                                const registry::ExportDefinition& def);

// `params` with every relative value replaced by the date it names for a run
// at `at_ms` in `zone` ("2026-12-07"); other values as they are.
// InvalidArgument for a relative value that does not parse.
StatusOr<nlohmann::json> ResolveRelativeParameters(const nlohmann::json& params, int64_t at_ms,
                                                   const cctz::time_zone& zone);

}  // namespace export_center::usecase
