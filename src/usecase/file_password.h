#pragma once
// filePassword at create: the strength rule and the policy of a type
// (docs/configuration.md#password-protected-files-file-password).
//
// The password is read from the request body and checked here, then handed to
// the create, which derives the file key material from it and keeps that only
// wrapped (common/file_key_ring.h): the password itself is never logged,
// echoed, stored or quoted in a message. Pure functions, any thread.

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "registry/export_definition.h"
#include "task/column_policy.h"

namespace export_center::usecase {

inline constexpr size_t kMinFilePasswordChars = 8;
inline constexpr size_t kMaxFilePasswordChars = 128;

// The strength rule, as the 400 and the page state it.
inline constexpr char kFilePasswordRule[] =
    "8 to 128 characters of valid UTF-8 without control characters, mixing at least two of: "
    "lower-case letters, upper-case letters, digits, other characters";

// The strength rule: kMinFilePasswordChars..kMaxFilePasswordChars Unicode
// code points of valid UTF-8, no control or bidi characters, and at least two
// of the four classes (a-z, A-Z, 0-9, anything else: punctuation, spaces,
// non-ASCII letters). InvalidArgument naming the rule broken, never the value.
Status CheckFilePasswordStrength(std::string_view password);

// Why a requester whose column policy is `policy` must give a file password
// for `def`: the definition's file-password: required, or a governed column
// with require-file-password that this requester sees in full (no decision
// masks, hashes or omits it). "" when none is required.
std::string FilePasswordRequiredBy(const registry::ExportDefinition& def,
                                   const task::ColumnPolicy& policy);

// What the type listing tells this requester: "NONE", "OPTIONAL" or "REQUIRED".
std::string FilePasswordPolicyName(const registry::ExportDefinition& def,
                                   const task::ColumnPolicy& policy);

// The body's `filePassword` ("" when absent or null), checked: a string that
// meets the strength rule, for a type that takes one. InvalidArgument naming
// the rule otherwise.
StatusOr<std::string> ReadFilePassword(const nlohmann::json& body,
                                       const registry::ExportDefinition& def);

}  // namespace export_center::usecase
