// libFuzzer target for the body of POST and PUT /subscriptions
// (usecase/subscriptions.h CheckSubscriptionBody): strict JSON, then the
// create body's checks, the schedule (presets, cron), the zone, the minimum
// interval, relative DATE parameters and the recipients, for a caller with
// the type's permission and one without. Properties beside "no crash, no
// leak": what is accepted stores JSON the strict parser reads back, a cron
// that parses again to itself, and a first slot after now.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "common/strict_json.h"
#include "registry/registry.h"
#include "schedule/cron.h"
#include "usecase/subscriptions.h"

namespace {

using export_center::ParseStrictJson;
using export_center::usecase::Principal;

std::shared_ptr<const export_center::registry::RegistrySnapshot> Snapshot() {
  auto s = std::make_shared<export_center::registry::RegistrySnapshot>();
  export_center::registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.required_permission = "export:orders";
  export_center::registry::ParameterSpec from;
  from.name = "from";
  from.type = "DATE";
  export_center::registry::ParameterSpec keyword;
  keyword.name = "keyword";
  orders.parameters = {from, keyword};
  s->definitions[orders.name] = orders;
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto snapshot = Snapshot();
  static const export_center::notify::mail::MailOptions mail = [] {
    export_center::notify::mail::MailOptions m;
    m.enabled = true;
    m.host = "127.0.0.1";
    m.allowed_domains = {"example.com"};
    return m;
  }();
  static const Principal kCallers[] = {
      {"alice", "t1", export_center::task::AppCode::kPlatform, {"export:orders"}},
      {"bob", "t1", export_center::task::AppCode::kPlatform, {}},
  };
  export_center::usecase::SubscriptionDeps deps;
  deps.snapshot = [] { return snapshot; };
  deps.mail = &mail;
  constexpr int64_t kNow = 1'780'000'000'000;  // 2026-05-28

  auto body = ParseStrictJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!body.ok()) return 0;
  for (const Principal& caller : kCallers) {
    auto spec = export_center::usecase::CheckSubscriptionBody(deps, *body, caller, kNow);
    if (!spec.ok()) continue;
    if (spec->first_slot_at <= kNow) std::abort();
    for (const std::string* stored :
         {&spec->parameters_json, &spec->delivery_json, &spec->schedule_json, &spec->owner_perms}) {
      if (!ParseStrictJson(*stored).ok()) std::abort();  // we would store what we refuse
    }
    auto cron = export_center::schedule::CronExpression::Parse(spec->cron);
    if (!cron.ok() || cron->text() != spec->cron) std::abort();
  }
  return 0;
}
