#pragma once
// Finding and masking credentials written inside connection strings and
// URLs, so nothing we print — `check` lines, configuration errors, logs —
// shows a password however the operator wrote it. Recognised forms:
//   - URL user info:       scheme://user:SECRET@host   (the user name stays)
//   - key=value pairs:     password=SECRET  passwd='a b'  (libpq keyword
//     strings, MySQL/ODBC option strings)
//   - URL query parameters: ...?password=SECRET&...  ...&access_token=SECRET
// Keys are matched case-insensitively at a word start: password, passwd,
// pwd, sslpassword, secret, secret_key, secretkey, token, access_token,
// api_key, apikey.
//
// Pure and thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace export_center::credentials {

// What masked text shows in place of a secret.
inline constexpr std::string_view kMask = "***";

// `text` with every credential of the forms above replaced by kMask.
std::string Mask(std::string_view text);

// The credentials themselves (unquoted), so a caller can also mask them where
// a library repeats them without their key.
std::vector<std::string> Find(std::string_view text);

}  // namespace export_center::credentials
