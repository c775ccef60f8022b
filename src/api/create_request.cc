#include "api/create_request.h"

#include <nlohmann/json.hpp>

#include "api/strict_json.h"

namespace export_center::api {

using json = nlohmann::json;

StatusOr<CreateRequest> ParseCreateRequest(
    const http::HttpRequest& req, const Principal& p,
    std::shared_ptr<const registry::RegistrySnapshot> snapshot, const task::LimitsOptions& limits) {
  EC_RETURN_IF_ERROR(CheckJsonContentType(req.Header("Content-Type")));
  EC_ASSIGN_OR_RETURN(json body, ParseStrictJson(req.body));
  EC_ASSIGN_OR_RETURN(CreateRequest out,
                      usecase::CheckCreateBody(body, p, std::move(snapshot), limits));
  if (out.locale.empty()) out.locale = FirstAcceptLanguageTag(req.Header("Accept-Language"));
  if (out.locale.empty()) out.locale = out.definition->locale;
  return out;
}

std::string FirstAcceptLanguageTag(std::string_view header) {
  const std::string_view first = header.substr(0, header.find(','));
  std::string_view tag = first.substr(0, first.find(';'));
  while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
  while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
  return task::IsLocaleTag(tag) ? std::string(tag) : std::string();
}

}  // namespace export_center::api
