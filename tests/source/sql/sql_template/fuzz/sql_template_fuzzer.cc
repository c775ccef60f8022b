// libFuzzer target for the MyBatis-compatible template engine
// (source/sql/sql_template/): the <script> XML and its dynamic tags, #{} and ${},
// the OGNL expressions, the ${}-over-user-input check, and the safety
// scanner on what was rendered.
//
// The input is the template, a NUL, then the parameter object as JSON (an
// input without a NUL, or a part that is not JSON, renders with a fixed
// object; as in the center, a parameter object nested past kMaxNesting is
// never read). "kw" and "keyword" are the user-typed (untrusted) parameters.
// Properties beside "no crash, no leak, no hang":
// - a template FindUnsafeDollar calls unsafe never renders (the security
//   rule of docs/sql-template.md#what--may-read), and one it calls safe
//   never fails for that reason;
// - both parameter orders (ordered_json, json) agree on success or failure.

#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "common/nesting.h"
#include "source/sql/sql_template/ognl_expression.h"
#include "source/sql/sql_template/sql_scanner.h"
#include "source/sql/sql_template/sql_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace st = export_center::sql_template;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string_view text = in.substr(0, nul);
  nlohmann::ordered_json params = {{"kw", "a%"},        {"keyword", "x"}, {"status", "ACTIVE"},
                                   {"ids", {1, 2, 3}},  {"min", 10},      {"flag", true},
                                   {"sort", "id DESC"}, {"m", {{"a", 1}}}};
  if (nul != std::string_view::npos) {
    // Read as the center reads every parameter object: within the nesting
    // bound (common/nesting.h; the API's own is tighter still).
    auto parsed = export_center::ParseJsonWithin<nlohmann::ordered_json>(in.substr(nul + 1));
    if (parsed.ok() && !parsed->is_discarded()) params = std::move(parsed).value();
  }
  st::RenderOptions options;
  options.untrusted = {"kw", "keyword"};

  auto unsafe = st::FindUnsafeDollar(text, options.untrusted);
  auto ordered = st::RenderTemplate(text, params, options);
  auto sorted = st::RenderTemplate(text, nlohmann::json(params), options);
  if (ordered.ok() != sorted.ok()) std::abort();
  if (unsafe.ok() && unsafe->has_value() && ordered.ok()) std::abort();  // ${} over user input ran
  if (ordered.ok()) {
    (void)st::ScanSql(ordered->sql);
    (void)st::ValidateOrderBy(ordered->sql, {"id", "name", "created_at"});
  }
  // Without untrusted parameters nothing may be refused as unsafe.
  (void)st::RenderTemplate(text, params);
  (void)st::ScanSql(text);
  (void)st::ValidateOrderBy(text, {"id", "name", "created_at"});
  (void)st::Expression::Parse(text);
  return 0;
}
