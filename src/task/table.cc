#include "task/table.h"

#include <nlohmann/json.hpp>

// PLACEHOLDER: the provider-route helper completes ParseWireValue,
// ParseDecimal and ValidateColumns.
