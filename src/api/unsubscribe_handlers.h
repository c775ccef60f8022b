#pragma once
// The unsubscribe link of a subscription's mail (docs/http-api.md#unsubscribe):
// GET …/subscriptions/{id}/unsubscribe?r=<recipient>&sig=<mac>, no
// authentication — the signature (subscription_links.h) is the grant, and it
// can only take that one recipient out of the subscription's delivery.emails.
// Answers a small HTML page: 200 when the recipient is out (or already was,
// or the subscription is gone), 403 for a bad signature, 404 for a malformed
// id. The change is conditional on the subscription's version, retried a
// few times against a concurrent edit.

#include <vector>

#include "api/handler_deps.h"
#include "api/route.h"

namespace export_center::api {

class UnsubscribeHandlers : public HandlerFamily {
 public:
  using HandlerFamily::HandlerFamily;
  std::vector<Route> Routes();

 private:
  Endpoint Unsubscribe;
};

}  // namespace export_center::api
