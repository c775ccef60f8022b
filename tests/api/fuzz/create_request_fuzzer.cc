// libFuzzer target for the body of POST /export-tasks and /export-previews:
// strict JSON (common/strict_json.h), the create request's fields
// (api/create_request.h) and the task parameters' checks and canonical form
// (usecase/parameters.h), against the export types of fuzz_registry.h.
//
// The input's first line is the Content-Type header, the rest the body (an
// input without a newline is all body, sent as application/json). The body
// goes through ParseCreateRequest for three callers (a platform user with
// the permission, one without, a merchant), and, when it is JSON, its
// `parameters` (or the whole value) through CanonicalParameters for every
// type. Properties beside "no crash, no leak": the canonical form is a
// fixpoint (canonicalising it again gives the same text) and is accepted by
// the strict parser.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/create_request.h"
#include "api/strict_json.h"
#include "common/strict_json.h"
#include "fuzz_registry.h"
#include "http/http_request.h"
#include "usecase/parameters.h"

namespace {

using export_center::ParseStrictJson;
using export_center::api::ParseCreateRequest;
using export_center::api::Principal;
using export_center::task::AppCode;
using export_center::usecase::CanonicalParameters;

void CheckCanonical(const nlohmann::json& params,
                    const export_center::registry::ExportDefinition& def,
                    const export_center::task::LimitsOptions& limits) {
  auto canonical = CanonicalParameters(params, def, limits);
  if (!canonical.ok()) return;
  auto again = ParseStrictJson(*canonical);
  if (!again.ok()) std::abort();  // we stored what we would refuse
  auto twice = CanonicalParameters(*again, def, limits);
  if (!twice.ok() || *twice != *canonical) std::abort();  // not canonical
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto snapshot = std::make_shared<const export_center::registry::RegistrySnapshot>(
      export_center::api::fuzz::FuzzSnapshot());
  static const Principal kCallers[] = {
      {"alice", "t1", AppCode::kPlatform, {"customer:export"}},
      {"bob", "t1", AppCode::kPlatform, {}},
      {"mia", "t2", AppCode::kMerchant, {"customer:export"}},
  };
  const export_center::task::LimitsOptions limits;

  const std::string_view in(reinterpret_cast<const char*>(data), size);
  export_center::http::HttpRequest req;
  req.method = "POST";
  const size_t newline = in.find('\n');
  if (newline == std::string_view::npos) {
    req.headers.Add("Content-Type", "application/json");
    req.body = std::string(in);
  } else {
    req.headers.Add("Content-Type", std::string(in.substr(0, newline)));
    req.body = std::string(in.substr(newline + 1));
  }
  (void)export_center::api::CheckJsonContentType(req.Header("Content-Type"));
  (void)export_center::usecase::CheckTaskName(req.body);

  for (const Principal& caller : kCallers) {
    auto parsed = ParseCreateRequest(req, caller, snapshot, limits);
    if (parsed.ok()) {
      if (parsed->definition == nullptr) std::abort();
      if (!ParseStrictJson(parsed->canonical_parameters).ok()) std::abort();
    }
  }

  auto body = ParseStrictJson(req.body);
  if (!body.ok()) return 0;
  const nlohmann::json& params =
      body->is_object() && body->contains("parameters") ? (*body)["parameters"] : *body;
  for (const auto& [name, def] : snapshot->definitions) CheckCanonical(params, def, limits);
  return 0;
}
