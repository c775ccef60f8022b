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
  // The signed link is the grant. GET only shows what the link would do:
  // mail scanners and link previews fetch every link of a mail, and must not
  // unsubscribe anyone. The change is the POST — the page's button, or a
  // mail client's one-click POST (RFC 8058) to the same URL.
  return {FamilyRoute(this, "GET", "/subscriptions/{id}/unsubscribe", &UnsubscribeHandlers::Confirm,
                      RouteNeeds::kNothing),
          FamilyRoute(this, "POST", "/subscriptions/{id}/unsubscribe",
                      &UnsubscribeHandlers::Unsubscribe, RouteNeeds::kNothing)};
}

std::optional<UnsubscribeHandlers::SignedLink> UnsubscribeHandlers::CheckLink(
    const http::HttpRequest& req, http::HttpResponse& res) const {
  const auto id = ParseId(req.PathParam(0));
  if (!id) {
    Page(res, 404, "Not found", "This unsubscribe link names no subscription.");
    return std::nullopt;
  }
  SignedLink link{*id, req.HasQuery("r") ? req.Query("r") : ""};
  const std::string sig = req.HasQuery("sig") ? req.Query("sig") : "";
  if (link.recipient.empty() || sig.empty() ||
      !CheckUnsubscribeSignature(deps_.download_secret, link.id, link.recipient, sig)) {
    Page(res, 403, "Link not valid",
         "This unsubscribe link is not valid. Use the link of a mail you received.");
    return std::nullopt;
  }
  return link;
}

void UnsubscribeHandlers::Confirm(const http::HttpRequest& req, const Principal&,
                                  http::HttpResponse& res) {
  if (!CheckLink(req, res)) return;
  // The form posts to this very URL (path and signed query); CSP's
  // default-src does not govern form-action, so the page needs no script.
  res.status = 200;
  res.SetHeader("Cache-Control", "no-store");
  res.SetHeader("Content-Security-Policy", "default-src 'none'");
  const std::string recipient = HtmlEscape(req.Query("r"));
  res.SetContent(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Unsubscribe</title></head>"
      "<body><h1>Unsubscribe / 退订</h1><p>Stop sending the mails of this subscription to " +
          recipient + "? / 不再向 " + recipient +
          " 发送此订阅的邮件？</p><form method=\"post\"><button type=\"submit\">"
          "Unsubscribe / 退订</button></form></body></html>\n",
      "text/html; charset=utf-8");
}

void UnsubscribeHandlers::Unsubscribe(const http::HttpRequest& req, const Principal&,
                                      http::HttpResponse& res) {
  const std::optional<SignedLink> link = CheckLink(req, res);
  if (!link) return;
  const int64_t id = link->id;
  const std::string& recipient = link->recipient;
  store::RunDeliveryLedger* ledger = deps_.api->run_deliveries;
  if (ledger == nullptr) {
    return Page(res, 503, "Not available", "Subscriptions are not available here.");
  }
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto settings = ledger->GetDeliverySettings(id);
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
    Status set = ledger->SetDeliveryJson(id, settings->version, *changed);
    if (set.ok()) {
      spdlog::info("subscription {}: a recipient unsubscribed through the mail's link", id);
      return Page(res, 200, "Unsubscribed",
                  recipient + " will receive no more mails of this subscription.");
    }
    if (set.code() != StatusCode::kConflict) break;
  }
  spdlog::warn("subscription {}: an unsubscribe could not be recorded", id);
  Page(res, 503, "Try again", "Unsubscribing did not work this time; please try again later.");
}

}  // namespace export_center::api
