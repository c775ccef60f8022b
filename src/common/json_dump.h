#pragma once
// JSON text of a value that may hold stored or foreign strings.
//
// nlohmann's dump() throws type_error.316 on a string that is not valid
// UTF-8; thrown on a poller or worker thread that ends the process. Every
// dump of text that came from a database, a replica, a provider or a client
// goes through DumpTolerant instead, which writes each invalid byte as
// U+FFFD and never throws for that reason.
//
// A template over the JSON type rather than a function of nlohmann::json so
// that common/ needs no JSON library (its target links none): any
// nlohmann::basic_json fits (json, ordered_json), and the caller's own
// include brings the type.

#include <string>

namespace export_center {

template <class Json>
std::string DumpTolerant(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace export_center
