#include "api/unsubscribe_handlers.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "api/subscription_links.h"
#include "common/ids.h"

namespace export_center::api {
namespace {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

void Page(http::HttpResponse& res, int status, const std::string& title, const std::string& text) {
  res.status = status;
  res.SetHeader("Cache-Control", "no-store");
  res.SetHeader("Content-Security-Policy", "default-src 'none'");
  res.SetContent("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" +
                     HtmlEscape(title) + "</title></head><body><h1>" + HtmlEscape(title) +
                     "</h1><p>" + HtmlEscape(text) + "</p></body></html>\n",
                 "text/html; charset=utf-8");
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The delivery settings ({"emails":[...],...}) with `recipient` (compared
// case-insensitively) taken out of "emails", every other key as it was;
// `removed` says whether it was there. InvalidArgument for a text that is
// not such an object.
StatusOr<std::string> RemoveRecipient(std::string_view text, std::string_view recipient,
                                      bool* removed) {
  *removed = false;
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object()) return InvalidArgument("delivery is not a JSON object");
  if (!doc.contains("emails") || !doc["emails"].is_array()) return doc.dump();
  nlohmann::json kept = nlohmann::json::array();
  const std::string wanted = Lower(recipient);
  for (const nlohmann::json& e : doc["emails"]) {
    if (e.is_string() && Lower(e.get<std::string>()) == wanted) {
      *removed = true;
    } else {
      kept.push_back(e);
    }
  }
  doc["emails"] = std::move(kept);
  return doc.dump();
}

constexpr int kAttempts = 5;  // against concurrent edits of the subscription

}  // namespace

std::vector<Route> UnsubscribeHandlers::Routes() {
  // The signed link is the grant.
  return {FamilyRoute(this, "GET", "/subscriptions/{id}/unsubscribe",
                      &UnsubscribeHandlers::Unsubscribe, RouteNeeds::kNothing)};
}

void UnsubscribeHandlers::Unsubscribe(const http::HttpRequest& req, const Principal&,
                                      http::HttpResponse& res) {
  const auto id = ParseId(req.PathParam(0));
  if (!id) return Page(res, 404, "Not found", "This unsubscribe link names no subscription.");
  const std::string recipient = req.HasQuery("r") ? req.Query("r") : "";
  const std::string sig = req.HasQuery("sig") ? req.Query("sig") : "";
  if (recipient.empty() || sig.empty() ||
      !CheckUnsubscribeSignature(deps_.download_secret, *id, recipient, sig)) {
    return Page(res, 403, "Link not valid",
                "This unsubscribe link is not valid. Use the link of a mail you received.");
  }
  store::RunDeliveryLedger* ledger = deps_.api->run_deliveries;
  if (ledger == nullptr) {
    return Page(res, 503, "Not available", "Subscriptions are not available here.");
  }
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto settings = ledger->GetDeliverySettings(*id);
    if (!settings.ok() && settings.status().code() == StatusCode::kNotFound) {
      return Page(res, 200, "Unsubscribed",
                  "The subscription no longer exists; it sends no more mail.");
    }
    if (!settings.ok()) break;
    bool removed = false;
    auto changed = RemoveRecipient(settings->delivery_json, recipient, &removed);
    if (!changed.ok()) break;
    if (!removed) {
      return Page(res, 200, "Unsubscribed",
                  recipient + " does not receive the mails of this subscription.");
    }
    Status set = ledger->SetDeliveryJson(*id, settings->version, *changed);
    if (set.ok()) {
      spdlog::info("subscription {}: a recipient unsubscribed through the mail's link", *id);
      return Page(res, 200, "Unsubscribed",
                  recipient + " will receive no more mails of this subscription.");
    }
    if (set.code() != StatusCode::kConflict) break;
  }
  spdlog::warn("subscription {}: an unsubscribe could not be recorded", *id);
  Page(res, 503, "Try again", "Unsubscribing did not work this time; please try again later.");
}

}  // namespace export_center::api
