#pragma once
// The unsubscribe link of a subscription's mail (docs/http-api.md#unsubscribe):
// …/subscriptions/{id}/unsubscribe?r=<recipient>&sig=<mac>, no
// authentication — the signature (subscription_links.h) is the grant, and it
// can only take that one recipient out of the subscription's delivery.emails.
// GET answers a page asking to confirm (a scanner fetching the link changes
// nothing); POST to the same URL — its button, or a mail client's one-click
// unsubscribe (RFC 8058) — makes the change. Both answer small HTML pages:
// 200, 403 for a bad signature, 404 for a malformed id. The change is
// conditional on the subscription's version, retried a few times against a
// concurrent edit.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/handler_deps.h"
#include "api/route.h"

namespace export_center::api {

class UnsubscribeHandlers : public HandlerFamily {
 public:
  using HandlerFamily::HandlerFamily;
  std::vector<Route> Routes();

 private:
  struct SignedLink {
    int64_t id = 0;
    std::string recipient{};
  };
  // The link's subscription and recipient when its signature holds; else
  // writes the 404 or 403 page and returns nullopt.
  std::optional<SignedLink> CheckLink(const http::HttpRequest& req, http::HttpResponse& res) const;
  Endpoint Confirm;
  Endpoint Unsubscribe;
};

}  // namespace export_center::api
